// PhaseTimelines against a brute-force answer: random properly nested phase ranges on a few
// threads, asked in the order a fold asks (mostly increasing times, with jumps back and
// switches between threads).
#include "capture/phase_timeline.h"

#include <vector>

#include <doctest/doctest.h>

using namespace argus::capture;
using argus::model::Phase;

namespace {

struct Rng {
  uint64_t s;
  uint64_t next(uint64_t n) { return ((s = s * 6364136223846793005ull + 1442695040888963407ull) >> 33) % n; }
};

constexpr RangeClass kClasses[] = {RangeClass::kForward, RangeClass::kBackward, RangeClass::kOptimizer, RangeClass::kUser,
                                   RangeClass::kMicrobatch, RangeClass::kNone};

// Children of [b, e) on `thread`, nested `depth` more levels, with gaps between them.
void nest(Rng& rng, uint32_t thread, int64_t b, int64_t e, int depth, std::vector<CpuRange>* out) {
  int64_t t = b;
  while (depth > 0 && t < e) {
    int64_t gap = static_cast<int64_t>(rng.next(3)) * static_cast<int64_t>(rng.next(40));
    int64_t len = 1 + static_cast<int64_t>(rng.next(static_cast<uint64_t>(std::max<int64_t>(1, (e - b) / 3))));
    int64_t cb = t + gap, ce = std::min(e, cb + len);
    if (cb >= e) break;
    out->push_back({cb, ce, thread, kClasses[rng.next(6)], false});
    nest(rng, thread, cb, ce, depth - 1, out);
    t = ce;
  }
}

// The innermost phase range of `thread` containing t: the latest begun, the shorter on a tie.
Phase bruteInThread(const std::vector<CpuRange>& ranges, uint32_t thread, int64_t t, bool* has) {
  const CpuRange* best = nullptr;
  for (const CpuRange& r : ranges) {
    if (r.thread != thread || phaseOfRange(r.cls) == Phase::kUnknown || r.end <= r.begin) continue;
    *has = true;
    if (r.begin <= t && t < r.end && (!best || r.begin > best->begin || (r.begin == best->begin && r.end < best->end))) best = &r;
  }
  return best ? phaseOfRange(best->cls) : Phase::kUnknown;
}

Phase brute(const std::vector<CpuRange>& ranges, uint32_t thread, uint32_t fallback, int64_t t) {
  bool has = false;
  Phase p = bruteInThread(ranges, thread, t, &has);
  if (has) return p;
  p = bruteInThread(ranges, fallback, t, &has);
  if (has) return p;
  uint32_t lowest = UINT32_MAX;
  for (const CpuRange& r : ranges) {
    if (phaseOfRange(r.cls) != Phase::kUnknown && r.end > r.begin) lowest = std::min(lowest, r.thread);
  }
  return lowest == UINT32_MAX ? Phase::kUnknown : bruteInThread(ranges, lowest, t, &has);
}

}  // namespace

TEST_CASE("phaseAt answers as a brute-force search does, for queries in any order") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng{seed};
    std::vector<CpuRange> ranges;
    for (uint32_t thread : {1u, 2u, 5u}) nest(rng, thread, 0, 20'000, 1 + static_cast<int>(rng.next(4)), &ranges);
    PhaseTimelines timelines;
    timelines.clear();
    // Added in a shuffled order: finish() sorts.
    for (size_t i = ranges.size(); i > 1; --i) std::swap(ranges[i - 1], ranges[rng.next(i)]);
    for (const CpuRange& r : ranges) timelines.add(r);
    timelines.finish({});
    int64_t t = -100;
    for (int q = 0; q < 3000; ++q) {
      const uint32_t thread = rng.next(8) == 0 ? static_cast<uint32_t>(rng.next(7)) : 1u + static_cast<uint32_t>(rng.next(2));
      const uint32_t fallback = rng.next(2) == 0 ? 5u : 9u;
      t = rng.next(50) == 0 ? t - static_cast<int64_t>(rng.next(5000)) : t + static_cast<int64_t>(rng.next(30));
      INFO("seed " << seed << " query " << q << " thread " << thread << " fallback " << fallback << " t " << t);
      REQUIRE(timelines.phaseAt(thread, fallback, t) == brute(ranges, thread, fallback, t));
    }
  }
}

TEST_CASE("phaseAt on an empty build answers kUnknown; a listed thread without ranges does not fall back") {
  PhaseTimelines timelines;
  timelines.clear();
  timelines.finish({});
  CHECK(timelines.phaseAt(1, 2, 100) == Phase::kUnknown);
  timelines.clear();
  timelines.add({0, 1000, 2, RangeClass::kForward, false});
  const uint32_t listed[] = {1};
  timelines.finish(listed);
  CHECK(timelines.phaseAt(1, 2, 500) == Phase::kUnknown);   // thread 1 has phase ranges elsewhere
  CHECK(timelines.phaseAt(3, 2, 500) == Phase::kForward);   // thread 3 has none: its fallback's
  CHECK(timelines.phaseAt(3, 4, 500) == Phase::kUnknown);   // neither has: the lowest thread that has, 1
  timelines.clear();
  timelines.add({0, 1000, 2, RangeClass::kForward, false});
  timelines.finish({});
  CHECK(timelines.phaseAt(3, 4, 500) == Phase::kForward);  // ... now 2
  CHECK(timelines.phaseAt(3, 4, 1500) == Phase::kUnknown);
}
