#include "capture/phase_timeline.h"

#include <algorithm>
#include <tuple>

namespace argus::capture {

void PhaseTimelines::build(std::span<const CpuRange> ranges) {
  sorted_.clear();
  segments_.clear();
  threads_.clear();
  last_segment_ = nullptr;
  for (const CpuRange& r : ranges) {
    if (r.end > r.begin && phaseOfRange(r.cls) != model::Phase::kUnknown) sorted_.push_back(r);
  }
  // Outer ranges first when two begin together (longer first), so the inner one is on top.
  std::sort(sorted_.begin(), sorted_.end(), [](const CpuRange& a, const CpuRange& b) {
    return std::tie(a.thread, a.begin, b.end) < std::tie(b.thread, b.begin, a.end);
  });
  size_t i = 0;
  while (i < sorted_.size()) {
    size_t j = i;
    while (j < sorted_.size() && sorted_[j].thread == sorted_[i].thread) ++j;
    Thread t{sorted_[i].thread, static_cast<uint32_t>(segments_.size()), 0, 0};
    flattenThread(std::span<const CpuRange>(sorted_).subspan(i, j - i));
    t.count = static_cast<uint32_t>(segments_.size()) - t.first;
    threads_.push_back(t);
    i = j;
  }
}

void PhaseTimelines::flattenThread(std::span<const CpuRange> sorted) {
  auto emit = [this](int64_t b, int64_t e, model::Phase p) {
    if (e <= b) return;
    if (!segments_.empty() && segments_.back().phase == p && segments_.back().end == b) {
      segments_.back().end = e;
      return;
    }
    segments_.push_back({b, e, p});
  };
  stack_.clear();
  int64_t cur = 0;
  auto popUntil = [&](int64_t t) {
    while (!stack_.empty() && stack_.back().end <= t) {
      emit(cur, stack_.back().end, phaseOfRange(stack_.back().cls));
      cur = std::max(cur, stack_.back().end);
      stack_.pop_back();
    }
  };
  for (const CpuRange& r : sorted) {
    popUntil(r.begin);
    if (!stack_.empty()) emit(cur, r.begin, phaseOfRange(stack_.back().cls));
    cur = r.begin;
    stack_.push_back(r);
  }
  popUntil(INT64_MAX);
}

PhaseTimelines::Thread* PhaseTimelines::find(uint32_t thread) {
  for (Thread& t : threads_) {
    if (t.thread == thread) return &t;
  }
  return nullptr;
}

model::Phase PhaseTimelines::phaseAtSlow(uint32_t thread, uint32_t fallback_thread, int64_t t) {
  Thread* th = find(thread);
  if (th == nullptr) th = find(fallback_thread);
  if (th == nullptr) {
    if (threads_.empty()) return model::Phase::kUnknown;
    th = &threads_.front();
  }
  const Segment* segs = segments_.data() + th->first;
  uint32_t n = th->count;
  // Queries come in nearly increasing time: try the last hit and its successor first.
  for (uint32_t c = th->cursor; c < n && c <= th->cursor + 1; ++c) {
    if (segs[c].begin <= t && t < segs[c].end) {
      th->cursor = c;
      remember(thread, fallback_thread, &segs[c]);
      return segs[c].phase;
    }
  }
  // Last segment with begin <= t.
  const Segment* it = std::upper_bound(segs, segs + n, t, [](int64_t v, const Segment& s) { return v < s.begin; });
  if (it == segs) return model::Phase::kUnknown;
  --it;
  if (t >= it->end) return model::Phase::kUnknown;
  th->cursor = static_cast<uint32_t>(it - segs);
  remember(thread, fallback_thread, it);
  return it->phase;
}

}  // namespace argus::capture
