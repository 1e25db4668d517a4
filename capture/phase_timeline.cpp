#include "capture/phase_timeline.h"

#include <algorithm>
#include <tuple>

namespace argus::capture {

void PhaseTimelines::clear() {
  sorted_.clear();
  segments_.clear();
  threads_.clear();
  known_begin_ = INT64_MAX, known_end_ = INT64_MIN;
  last_resolved_ = -1;
}

void PhaseTimelines::sortRanges() {
  // Sources that deliver ranges in begin order (imports) add each thread's ranges in order
  // already: then a stable partition by thread sorts them in linear time. Otherwise (few
  // ranges per step, or pops of nested push/pop ranges) a real sort.
  constexpr size_t kMaxThreads = 16;
  by_thread_.clear();
  bool ordered = true;
  for (const CpuRange& r : sorted_) {
    auto it = std::find_if(by_thread_.begin(), by_thread_.end(), [&](const ThreadOrder& t) { return t.thread == r.thread; });
    if (it == by_thread_.end()) {
      if (by_thread_.size() == kMaxThreads) {
        ordered = false;
        break;
      }
      by_thread_.push_back({r.thread, 0, r.begin, r.end});
      it = by_thread_.end() - 1;
    } else if (r.begin < it->last_begin || (r.begin == it->last_begin && r.end > it->last_end)) {
      ordered = false;
      break;
    }
    ++it->count;
    it->last_begin = r.begin;
    it->last_end = r.end;
  }
  if (!ordered) {
    // Outer ranges first when two begin together (longer first), so the inner one is on top.
    auto before = [](const CpuRange& a, const CpuRange& b) { return std::tie(a.thread, a.begin, b.end) < std::tie(b.thread, b.begin, a.end); };
    // Push/pop ranges arrive as they end: each after the ranges nested in it. Insertion sort
    // moves each one back past those (a few per range); a real sort when that grows long.
    size_t n = sorted_.size(), budget = 8 * n + 64;
    for (size_t i = 1; i < n; ++i) {
      CpuRange x = sorted_[i];
      size_t j = i;
      for (; j > 0 && before(x, sorted_[j - 1]); --j) sorted_[j] = sorted_[j - 1];
      sorted_[j] = x;
      if ((budget -= std::min(budget, i - j)) == 0) {
        std::sort(sorted_.begin(), sorted_.end(), before);
        return;
      }
    }
    return;
  }
  if (by_thread_.size() <= 1) return;
  std::sort(by_thread_.begin(), by_thread_.end(), [](const ThreadOrder& a, const ThreadOrder& b) { return a.thread < b.thread; });
  uint32_t offset = 0;
  for (ThreadOrder& t : by_thread_) {
    uint32_t n = t.count;
    t.count = offset;  // from here on: the next slot of this thread
    offset += n;
  }
  partitioned_.resize(sorted_.size());
  for (const CpuRange& r : sorted_) {
    auto it = std::find_if(by_thread_.begin(), by_thread_.end(), [&](const ThreadOrder& t) { return t.thread == r.thread; });
    partitioned_[it->count++] = r;
  }
  sorted_.swap(partitioned_);
}

void PhaseTimelines::finish(std::span<const uint32_t> threads) {
  sortRanges();
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
  bool added = false;
  for (uint32_t thread : threads) {
    if (find(thread) != nullptr) continue;
    threads_.push_back({thread, static_cast<uint32_t>(segments_.size()), 0, 0});
    added = true;
  }
  if (added) std::sort(threads_.begin(), threads_.end(), [](const Thread& a, const Thread& b) { return a.thread < b.thread; });
  last_resolved_ = -1;
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
  Thread* th = nullptr;
  if (thread == last_thread_ && fallback_thread == last_fallback_ && last_resolved_ >= 0) {
    th = &threads_[static_cast<size_t>(last_resolved_)];
  } else {
    th = find(thread);
    if (th == nullptr) th = find(fallback_thread);
    if (th == nullptr) {
      if (threads_.empty()) return remember(thread, fallback_thread, INT64_MIN, INT64_MAX, model::Phase::kUnknown);
      th = &threads_.front();
    }
  }
  last_resolved_ = static_cast<int32_t>(th - threads_.data());
  const Segment* segs = segments_.data() + th->first;
  const size_t n = th->count;
  // The answer is the last segment with begin <= t. Queries come in nearly increasing time:
  // most fall in the last hit's segment or the gap after it, or in the next segment; else
  // from the last hit, probe 1, 2, 4, ... segments ahead to bracket it, then search the
  // bracket; a query before the last hit searches the segments before it.
  const Segment* next = nullptr;
  size_t c = th->cursor;
  for (size_t k = c; k < c + 2 && k < n && segs[k].begin <= t; ++k) {
    if (k + 1 == n || t < segs[k + 1].begin) {
      next = segs + k + 1;
      break;
    }
  }
  if (next == nullptr) {
    size_t lo = 0, hi = n;  // the first segment with begin > t is in [lo, hi]
    if (c < n && segs[c].begin <= t) {
      size_t known = c, probe = c + 1;
      for (size_t step = 2; probe < n && segs[probe].begin <= t; step *= 2) {
        known = probe;
        probe = known + step;
      }
      lo = known + 1;
      hi = std::min(probe, n);
    } else if (c < n) {
      hi = c;
    }
    next = std::upper_bound(segs + lo, segs + hi, t, [](int64_t v, const Segment& s) { return v < s.begin; });
  }
  int64_t gap_end = next == segs + n ? INT64_MAX : next->begin;
  if (next == segs) return remember(thread, fallback_thread, INT64_MIN, gap_end, model::Phase::kUnknown);
  const Segment* it = next - 1;
  th->cursor = static_cast<uint32_t>(it - segs);
  if (t >= it->end) return remember(thread, fallback_thread, it->end, gap_end, model::Phase::kUnknown);
  return remember(thread, fallback_thread, it->begin, it->end, it->phase);
}

}  // namespace argus::capture
