// Limit: skips `offset` rows, passes at most `limit` (-1: all), then stops pulling, so a
// LIMIT over a scan reads only the chunks it needs.
#pragma once

#include "query/execution/physical_operator.h"

namespace argus::query {

class Limit final : public PhysicalOperator {
 public:
  Limit(QueryContext& ctx, PhysicalOperatorPtr child, int64_t limit, int64_t offset);
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;

 private:
  int64_t limit_;
  int64_t offset_;
  uint64_t skip_left_;
  uint64_t take_left_;
  std::vector<uint32_t> sel_;
};

}  // namespace argus::query
