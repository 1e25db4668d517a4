#include "capture/nccl/nccl_drain.h"

#include <algorithm>
#include <string>

#include "capture/nvtx/epoch_clock.h"

namespace argus::capture::nccl {

Drain::Drain(Plugin& plugin, NameTable& names, DrainOptions options) : plugin_(plugin), names_(names), options_(options) {
  plugin_.setSamplePeriod(options_.sample_period);
  last_adapt_ns_ = nvtx::EpochClock::nowNs();
}

std::span<const TraceEvent> Drain::drain() {
  out_.clear();
  RecordQueue* q = plugin_.queue();
  uint64_t steps = 0;
  if (q != nullptr) {
    CollectiveRecord r;
    while (q->pop(&r)) {
      out_.push_back(convert(r));
      steps += r.steps;
    }
  }
  int64_t now = nvtx::EpochClock::nowNs();
  plugin_.recycle(now, options_.stuck_ns);
  adapt(steps, now);
  return out_;
}

void Drain::adapt(uint64_t steps, int64_t now_ns) {
  steps_since_adapt_ += steps;
  int64_t elapsed = now_ns - last_adapt_ns_;
  if (elapsed < 100'000'000 || options_.sample_period == 0) return;  // decide on >= 100 ms of events
  double rate = static_cast<double>(steps_since_adapt_) * 1e9 / static_cast<double>(elapsed);
  uint32_t period = plugin_.samplePeriod();
  if (rate > static_cast<double>(options_.max_steps_per_s) && period < kMaxSamplePeriod) {
    plugin_.setSamplePeriod(std::min(period * 2, kMaxSamplePeriod));
  } else if (rate < static_cast<double>(options_.max_steps_per_s) / 4 && period > options_.sample_period) {
    plugin_.setSamplePeriod(std::max(period / 2, options_.sample_period));
  }
  steps_since_adapt_ = 0;
  last_adapt_ns_ = now_ns;
}

int64_t Drain::waitNs(const CollectiveRecord& r, int64_t dur_ns) {
  if (r.steps == 0 || dur_ns <= 0) return -1;
  // The receive steps' wait holds both the peer's lateness and the transfer; the transfer
  // part is estimated at the rate this operation's own send steps moved data on the network.
  int64_t recv_transfer = 0;
  if (r.recv_wait_ns > 0) {
    if (r.send_bytes == 0 || r.send_ns <= 0) return -1;  // receive-only: cannot tell
    double ns_per_byte = static_cast<double>(r.send_ns) / static_cast<double>(r.send_bytes);
    recv_transfer = std::min<int64_t>(r.recv_wait_ns, static_cast<int64_t>(static_cast<double>(r.recv_bytes) * ns_per_byte));
  }
  int64_t peer = r.peer_wait_ns + (r.recv_wait_ns - recv_transfer);
  int64_t total = r.peer_wait_ns + r.send_ns + r.recv_wait_ns + r.local_ns;
  if (total <= 0) return -1;
  return static_cast<int64_t>(static_cast<double>(dur_ns) * (static_cast<double>(peer) / static_cast<double>(total)) + 0.5);
}

TraceEvent Drain::convert(const CollectiveRecord& r) {
  ++stats_.records;
  if (r.steps > 0) ++stats_.sampled;
  if (r.op == model::CollectiveOp::kOther) ++stats_.unknown_ops;
  if (r.bytes == 0) ++stats_.unknown_bytes;
  clock_offset_ns_ = std::min(clock_offset_ns_, r.cpu_clock_lag_ns);
  TraceEvent e;
  e.type = EventType::kCollective;
  e.op = r.op;
  e.id = r.comm_hash;
  e.bytes = r.bytes;
  e.peer = r.peer;
  e.thread = r.thread;
  e.device = options_.device;
  e.stream = kAnyStream;  // CUPTI's stream id of its kernels is unknown here
  e.name = nameOf(r);
  e.start_ns = r.host_start_ns;
  e.end_ns = std::max(r.host_end_ns, r.host_start_ns);
  if (r.gpu_start != 0 && r.gpu_stop >= r.gpu_start && clock_offset_ns_ != INT64_MAX) {
    ++stats_.gpu_timed;
    e.start_ns = static_cast<int64_t>(r.gpu_start) + clock_offset_ns_;
    e.end_ns = static_cast<int64_t>(r.gpu_stop) + clock_offset_ns_;
  }
  // The enqueue is the operation's launch; an estimate of the GPU start before it (the
  // offset's error) would make an implausible launch, so it is left unknown then.
  e.launch_ns = r.host_start_ns <= e.start_ns ? r.host_start_ns : kNoTime;
  e.wait_ns = waitNs(r, e.end_ns - e.start_ns);
  return e;
}

uint32_t Drain::nameOf(const CollectiveRecord& r) {
  size_t op = std::min(static_cast<size_t>(r.op), kOps - 1);
  size_t algo = r.algo < kAlgoCount ? r.algo : 0, proto = r.proto < kProtoCount ? r.proto : 0;
  uint32_t& id = name_ids_[(op * kAlgoCount + algo) * kProtoCount + proto];
  if (id == 0) {
    std::string text = model::collectiveOpName(r.op);
    if (algo != 0 || proto != 0) text.append(" ").append(algoName(static_cast<uint8_t>(algo))).append("/").append(protoName(static_cast<uint8_t>(proto)));
    id = names_.intern(text);
  }
  return id;
}

NcclStats Drain::stats() const {
  NcclStats s = stats_;
  s.sample_period = plugin_.samplePeriod();
  s.gpu_clock_offset_ns = clock_offset_ns_ == INT64_MAX ? 0 : clock_offset_ns_;
  s.plugin = plugin_.counters();
  return s;
}

}  // namespace argus::capture::nccl
