// PhaseTimelines: "which phase range encloses time t on thread T", for attributing a
// kernel to the phase of the CPU ranges around its launch.
//
// finish() flattens each thread's nested phase ranges into disjoint segments labelled with
// the innermost range's phase (a stack sweep over ranges sorted by begin), so a lookup is
// a binary search, or O(1) when queries come in nearly increasing time (a cursor per
// thread). The owner adds only the ranges that can enclose its queries (those overlapping
// the times it will ask about); lookups at other times answer kUnknown. Ranges on one thread are assumed properly nested (push/pop, or Chrome "X"
// events of one thread); crossing ranges are attributed approximately (the later-begun
// range wins while it is open). Not thread-safe; buffers are reused across builds.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "capture/name_rules.h"
#include "model/step_record.h"

namespace argus::capture {

struct CpuRange {
  int64_t begin = 0;
  int64_t end = 0;
  uint32_t thread = 0;
  RangeClass cls = RangeClass::kNone;
  bool comm = false;  // NameRules::isCommRange: read only for steps without device activity
};

class PhaseTimelines {
 public:
  // Starts a new build. Then add() each range (any order; ranges whose class has no phase,
  // and empty ones, are skipped) and finish().
  void clear();
  void add(const CpuRange& r) {
    if (r.end > r.begin && phaseOfRange(r.cls) != model::Phase::kUnknown) sorted_.push_back(r);
  }
  // `threads`: threads that count as having phase ranges even when none was added (their
  // ranges lie away from the queries): a lookup on one of them finds no segment rather
  // than falling back to another thread.
  void finish(std::span<const uint32_t> threads);
  // The phase of the innermost phase range containing `t` on `thread`; when `thread` has
  // no phase ranges, on `fallback_thread`; when neither has, on the lowest-numbered thread
  // that has; kUnknown when none contains t.
  model::Phase phaseAt(uint32_t thread, uint32_t fallback_thread, int64_t t) {
    // Launches come in nearly increasing time from few threads: the answer found last, a
    // segment or the gap between two, holds for the same query threads over an interval.
    if (thread == last_thread_ && fallback_thread == last_fallback_ && known_begin_ <= t && t < known_end_) return known_phase_;
    return phaseAtSlow(thread, fallback_thread, t);
  }
  bool empty() const { return segments_.empty(); }

 private:
  struct Segment {
    int64_t begin, end;
    model::Phase phase;
  };
  struct Thread {
    uint32_t thread;
    uint32_t first, count;  // segments_[first, first + count)
    uint32_t cursor;        // last hit, relative to first
  };
  model::Phase phaseAtSlow(uint32_t thread, uint32_t fallback_thread, int64_t t);
  Thread* find(uint32_t thread);
  model::Phase remember(uint32_t thread, uint32_t fallback_thread, int64_t begin, int64_t end, model::Phase phase) {
    last_thread_ = thread, last_fallback_ = fallback_thread;
    known_begin_ = begin, known_end_ = end, known_phase_ = phase;
    return phase;
  }
  // Sorts sorted_ by (thread, begin, longer first).
  void sortRanges();
  void flattenThread(std::span<const CpuRange> sorted);

  struct ThreadOrder {
    uint32_t thread;
    uint32_t count;
    int64_t last_begin, last_end;
  };
  std::vector<ThreadOrder> by_thread_;
  std::vector<CpuRange> sorted_, partitioned_;
  std::vector<CpuRange> stack_;
  std::vector<Segment> segments_;
  std::vector<Thread> threads_;
  // The last answer of phaseAtSlow: for these query threads, `known_phase_` over
  // [known_begin_, known_end_) (empty: none since clear()).
  uint32_t last_thread_ = 0, last_fallback_ = 0;
  int32_t last_resolved_ = -1;  // threads_ index those query threads resolved to (-1: none since finish())
  int64_t known_begin_ = INT64_MAX, known_end_ = INT64_MIN;
  model::Phase known_phase_ = model::Phase::kUnknown;
};

}  // namespace argus::capture
