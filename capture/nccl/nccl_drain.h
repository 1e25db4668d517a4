// Drain: the collector's side of the NCCL profiler source (docs/capture/nccl.md). It empties
// the Plugin's RecordQueue and turns each finished operation into one kCollective TraceEvent
// for the StepAssembler, and adapts the proxy-event sampling to the event rate.
//
//   NameTable names;                                   // shared with the other sources
//   nccl::Drain drain(nccl::Plugin::instance(), names);
//   for (const TraceEvent& e : drain.drain()) assembler.onEvent(e);   // every ~10-100 ms
//
// What comes out, per Coll / P2p operation: op, id = communicator hash, bytes = count x
// datatype size, peer (p2p), name "<op> <algo>/<proto>" ("all_reduce Ring/Simple"; "send"),
// launch_ns = when NCCL enqueued it, thread = the enqueuing thread, device from the options.
// The span is the GPU execution of its kernel channels (earliest channel start to latest
// stop, GPU globaltimer converted to the capture clock) when NCCL gave channel timestamps,
// else from the enqueue to the last stopEvent of it or its children. wait_ns is the span's
// share spent waiting for a late peer, from the proxy steps of sampled operations, -1
// otherwise ("Wait vs transfer" in the doc).
//
// Not thread-safe: one thread (the collector) calls drain().
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "capture/name_table.h"
#include "capture/nccl/descriptor_names.h"
#include "capture/nccl/nccl_plugin.h"
#include "capture/trace_event.h"

namespace argus::capture::nccl {

struct DrainOptions {
  uint32_t device = 0;  // TraceEvent::device of every operation (the rank's GPU)
  // The configured sampling period (ARGUS_NCCL_SAMPLE): adaptation never samples more often.
  uint32_t sample_period = 16;
  // Proxy steps per second the sampling aims under: above, the period doubles (up to
  // kMaxSamplePeriod); below a quarter of it, it halves back toward sample_period.
  uint64_t max_steps_per_s = 100'000;
  // An operation still waiting for a kernel channel this long after it started is published
  // without it (NCCL did not report every channel it announced).
  int64_t stuck_ns = 10'000'000'000;
};
inline constexpr uint32_t kMaxSamplePeriod = 1u << 16;

struct NcclStats {
  uint64_t records = 0;        // operations drained
  uint64_t sampled = 0;        // ... with proxy steps (wait_ns known or estimated)
  uint64_t gpu_timed = 0;      // ... whose span came from kernel-channel timestamps
  uint64_t unknown_ops = 0;    // func names Argus does not know (op kOther)
  uint64_t unknown_bytes = 0;  // datatypes Argus does not know (bytes 0)
  uint32_t sample_period = 0;  // the period now
  int64_t gpu_clock_offset_ns = 0;  // capture clock - GPU globaltimer (0 until seen)
  PluginCounters plugin;       // the NCCL side's counters
};

class Drain {
 public:
  // `names` must outlive the Drain; drain() interns into it.
  Drain(Plugin& plugin, NameTable& names, DrainOptions options = {});
  Drain(const Drain&) = delete;
  Drain& operator=(const Drain&) = delete;

  // Converts every operation published since the last call; the span stays valid until the
  // next call. Allocates only while its buffer grows and for new names.
  std::span<const TraceEvent> drain();
  NcclStats stats() const;
  // Operations lost on NCCL's side (full pool or queue), since the process started.
  uint64_t dropped() const { return plugin_.counters().lost_operations; }

  // The wait share of an operation's `dur_ns` (docs: "Wait vs transfer"); -1 when its proxy
  // steps do not tell (none, or receive-only). Exposed for the tests.
  static int64_t waitNs(const CollectiveRecord& r, int64_t dur_ns);

 private:
  TraceEvent convert(const CollectiveRecord& r);
  uint32_t nameOf(const CollectiveRecord& r);
  void adapt(uint64_t steps, int64_t now_ns);

  Plugin& plugin_;
  NameTable& names_;
  const DrainOptions options_;
  NcclStats stats_;
  std::vector<TraceEvent> out_;
  int64_t clock_offset_ns_ = INT64_MAX;  // min (CPU now - pTimer) seen: GPU -> capture clock
  int64_t last_adapt_ns_ = 0;
  uint64_t steps_since_adapt_ = 0;
  static constexpr size_t kOps = static_cast<size_t>(model::CollectiveOp::kBarrier) + 1;
  std::array<uint32_t, kOps * kAlgoCount * kProtoCount> name_ids_{};  // 0: not interned yet
};

}  // namespace argus::capture::nccl
