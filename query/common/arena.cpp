#include "query/common/arena.h"

namespace argus::query {

std::string_view Arena::copy(std::string_view s) { return strings_.copy(s); }

const model::DurationHistogram* Arena::copy(const model::DurationHistogram& h) {
  model::DurationHistogram* out = newHistogram();
  *out = h;
  hist_bytes_ += h.buckets().size() * sizeof(model::DurationHistogram::Bucket);
  return out;
}

model::DurationHistogram* Arena::newHistogram() {
  hist_bytes_ += sizeof(model::DurationHistogram);
  return &hists_.emplace_back();
}

void Arena::clear() {
  strings_.clear();
  hists_.clear();
  hist_bytes_ = 0;
}

}  // namespace argus::query
