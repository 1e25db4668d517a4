// PhaseTimelines: "which phase range encloses time t on thread T", for attributing a
// kernel to the phase of the CPU ranges around its launch.
//
// build() flattens each thread's nested phase ranges into disjoint segments labelled with
// the innermost range's phase (a stack sweep over ranges sorted by begin), so a lookup is
// a binary search, or O(1) when queries come in nearly increasing time (a cursor per
// thread). Ranges on one thread are assumed properly nested (push/pop, or Chrome "X"
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
};

class PhaseTimelines {
 public:
  // Rebuilds from `ranges` (any order); ranges whose class has no phase are skipped.
  void build(std::span<const CpuRange> ranges);
  // The phase of the innermost phase range containing `t` on `thread`; when `thread` has
  // no phase ranges, on `fallback_thread`; kUnknown when none contains t.
  model::Phase phaseAt(uint32_t thread, uint32_t fallback_thread, int64_t t);
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
  Thread* find(uint32_t thread);
  void flattenThread(std::span<const CpuRange> sorted);

  std::vector<CpuRange> sorted_;
  std::vector<CpuRange> stack_;
  std::vector<Segment> segments_;
  std::vector<Thread> threads_;
};

}  // namespace argus::capture
