#include "query/common/arena.h"

#include <algorithm>
#include <cstring>

namespace argus::query {

std::string_view Arena::copy(std::string_view s) {
  if (s.empty()) return {};
  if (blocks_.empty() || block_size_ - block_used_ < s.size()) {
    size_t size = std::max(kBlockBytes, s.size());
    blocks_.push_back(std::make_unique<char[]>(size));
    block_used_ = 0;
    block_size_ = size;
    bytes_ += size;
  }
  char* p = blocks_.back().get() + block_used_;
  std::memcpy(p, s.data(), s.size());
  block_used_ += s.size();
  return std::string_view(p, s.size());
}

const model::DurationHistogram* Arena::copy(const model::DurationHistogram& h) {
  model::DurationHistogram* out = newHistogram();
  *out = h;
  bytes_ += h.buckets().size() * sizeof(model::DurationHistogram::Bucket);
  return out;
}

model::DurationHistogram* Arena::newHistogram() {
  bytes_ += sizeof(model::DurationHistogram);
  return &hists_.emplace_back();
}

void Arena::clear() {
  blocks_.clear();
  block_used_ = block_size_ = 0;
  hists_.clear();
  bytes_ = 0;
}

}  // namespace argus::query
