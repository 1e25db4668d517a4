#include "capture/shim/collector.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "capture/nvtx/epoch_clock.h"
#include "capture/nvtx/nvtx_recorder.h"
#include "capture/shim/shim_log.h"

namespace argus::capture::shim {
namespace {

// The NVTX rings are sized before the Drain attaches (threads that record later get them).
nvtx::Recorder& sizedRecorder(const ShimConfig& config) {
  nvtx::Recorder& r = nvtx::Recorder::instance();
  r.setRingSlots(budgetOf(config.max_memory_bytes).nvtx_ring_slots);
  return r;
}

wire::StepSenderOptions senderOptions(const ShimConfig& config, std::function<void(uint64_t, uint64_t)> on_dump_request) {
  wire::StepSenderOptions o;
  o.host = config.host;
  o.port = config.port;
  o.job = config.job;
  o.auth_token = config.auth_token;
  o.topology = config.topology;
  o.client = "argus-capture/0.1";
  o.max_buffered_bytes = budgetOf(config.max_memory_bytes).sender_bytes;
  o.max_buffered_records = config.send_buffer_records;
  o.send_timeout = std::chrono::milliseconds(0);  // a full buffer spools, a full spool drops (counted); never waits
  if (config.spool_max_bytes > 0) o.spool_dir = config.spool_dir;
  o.spool_max_bytes = config.spool_max_bytes;
  o.log = [](std::string_view line) { shimLog(line); };
  o.on_dump_request = std::move(on_dump_request);
  return o;  // codec: delta + zstd, the defaults
}

// The NCCL plugin is sized before its first init (NCCL's communicator setup, which may be
// what started the shim); the Drain then sets the sampling period.
nccl::Plugin& configuredPlugin(const ShimConfig& config) {
  nccl::Plugin& p = nccl::Plugin::instance();
  nccl::PluginOptions o;
  o.sample_period = config.nccl_sample_period;
  p.configure(o);
  return p;
}

nccl::DrainOptions ncclOptions(const ShimConfig& config) {
  nccl::DrainOptions o;
  o.device = config.topology.device;
  o.sample_period = config.nccl_sample_period;
  return o;
}

std::unique_ptr<FlightRecorder> makeRecorder(const ShimConfig& config) {
  if (config.flight_recorder_bytes == 0) return nullptr;
  FlightRecorderOptions o;
  o.max_bytes = config.flight_recorder_bytes;
  o.max_steps = config.flight_recorder_steps;
  try {
    return std::make_unique<FlightRecorder>(o);
  } catch (const std::bad_alloc&) {
    shimLog("flight recorder off: cannot allocate its " + std::to_string(config.flight_recorder_bytes >> 20) + " MiB ring");
    return nullptr;
  }
}

// Writes `data` to `path` through a temporary file renamed into place, so a reader never
// sees half a dump. Returns "" or what failed (with errno's text).
std::string writeFileAtomically(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot create " + tmp + ": " + std::strerror(errno);
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = "cannot write " + tmp + ": " + std::strerror(n < 0 ? errno : ENOSPC);
      ::close(fd);
      ::unlink(tmp.c_str());
      return why;
    }
    off += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    std::string why = "cannot write " + tmp + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return why;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return why;
  }
  return "";
}

std::string stepRange(uint64_t from, uint64_t to) { return std::to_string(from) + "-" + std::to_string(to); }

StepAssemblerOptions assemblerOptions(const ShimConfig& config) {
  StepAssemblerOptions o;
  o.rank = config.topology.rank;
  o.max_buffered_events = budgetOf(config.max_memory_bytes).assembler_events;
  return o;
}

}  // namespace

#ifdef ARGUS_SHIM_CUPTI
void Collector::Sink::onEvents(std::span<const TraceEvent> batch) {
  if (recorder != nullptr) {
    for (const TraceEvent& e : batch) recorder->record(e);
  }
  assembler->onEvents(batch);  // the same result as onEvent per event, at less cost per event
  events += batch.size();
}
#endif

Collector::Collector(const ShimConfig& config)
    : config_(config),
      owner_pid_(::getpid()),
      nvtx_(sizedRecorder(config), names_),
      nccl_(configuredPlugin(config), names_, ncclOptions(config)),
      recorder_(makeRecorder(config)),
      sender_(senderOptions(config, [this](uint64_t from, uint64_t to) { dump_requests_.push(from, to); })),
      assembler_(names_, assemblerOptions(config), [this](const StepOutput& out) { onStep(out); }) {
#ifdef ARGUS_SHIM_CUPTI
  cupti::CuptiSourceOptions o;
  o.epoch_clock = &nvtx::EpochClock::nowNs;  // GPU times on the NVTX clock
  o.buffers.pool_bytes = budgetOf(config.max_memory_bytes).cupti_pool_bytes;
  o.launch_attribution = config.launch_attribution;
  o.log = [](const char* line) { shimLog(line); };
  gpu_ = std::make_unique<cupti::CuptiSource>(names_, o);
  sink_.assembler = &assembler_;
  sink_.recorder = recorder_.get();
#endif
  if (config.stack_hz > 0) {
    stacks::StackSamplerOptions so;
    so.hz = config.stack_hz;
    so.clock_ns = &nvtx::EpochClock::nowNs;  // sample times on the NVTX clock
    so.log = [](std::string_view line) { shimLog(line); };
    stacks_ = std::make_unique<stacks::StackSampler>(so);
    stacks_->start();
  }
  thread_ = std::thread([this] { run(); });
}

Collector::~Collector() {
  shutdown();
}

void Collector::startGpu() {
#ifdef ARGUS_SHIM_CUPTI
  if (quiet() || shut_down_.load()) return;
  if (!gpu_->start()) return;  // the source logged "GPU tracing off: ..."; NVTX carries on
  if (config_.verbose) {
    shimLog("GPU tracing on: " + gpu_->library() + ", API records of " + std::to_string(gpu_->launchApis()) + " launch APIs" +
            (gpu_->lent() ? "; lent to torch.profiler until it stops" : ""));
  }
  // Every NVTX range change tags the kernels its thread launches next (static storage: the
  // listener must outlive every NVTX call of the process).
  static nvtx::RangeListener tag;
  tag = {&cupti::CuptiSource::rangeListener, gpu_.get()};
  nvtx::Recorder::instance().setRangeListener(&tag);
#endif
}

void Collector::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(config_.collect_interval_ms));
    if (stop_) break;
    lock.unlock();
    if (!quiet()) {
      collectOnce();
      dumpIfRequested();
    }
    lock.lock();
  }
}

void Collector::collectOnce(bool final) {
  try {
    uint64_t events = 0;
    for (const TraceEvent& e : nvtx_.drain()) {
      onEvent(e);
      ++events;
    }
    if (stacks_) {  // new stacks' dictionary entries reach the sender before their samples' records
      stacks_->drain([this](std::span<const model::StackDictEntry> d) { sender_.addStacks(d); },
                     [&](const TraceEvent& e) {
                       onEvent(e);
                       ++events;
                     });
    }
    for (const TraceEvent& e : nccl_.drain()) {
      onEvent(e);
      ++events;
    }
#ifdef ARGUS_SHIM_CUPTI
    sink_.events = 0;
    gpu_->drain(sink_, final);
    events += sink_.events;
#endif
    std::lock_guard lock(mu_);
    ++stats_.collections;
    stats_.events += events;
  } catch (const std::exception& e) {
    goQuiet(std::string("collector failed: ") + e.what());
  } catch (...) {
    goQuiet("collector failed: unknown exception");
  }
}

uint64_t Collector::sourceDropsNow() {
  uint64_t drops = nvtx_.stats().dropped + nccl_.dropped();
#ifdef ARGUS_SHIM_CUPTI
  drops += gpu_->stats().cupti_dropped;
#endif
  if (stacks_) drops += stacks_->stats().dropped;
  return drops;
}

void Collector::onStep(const StepOutput& out) {
  if (quiet()) return;
  if (recorder_) recorder_->stepEnded(out.record.step, out.record.start_ns, out.record.end_ns);
  // Events the sources lost at their rings, and records the sender's full buffer refused,
  // since the previous record: added to this record's dropped-events counter (the
  // assembler's own drops are already in it), so every loss shows in the store.
  uint64_t source_drops = sourceDropsNow();
  uint64_t refused;
  {
    std::lock_guard lock(mu_);
    stats_.source_drops = source_drops;
    refused = stats_.records_dropped;
  }
  uint64_t lost = source_drops + refused;
  model::StepRecord record = out.record;
  if (lost > drops_reported_) {
    uint64_t delta = lost - drops_reported_;
    bool merged = false;
    for (auto& ev : record.events) {
      if (ev.kind == model::EventKind::kDroppedEvents) {
        ev.value += delta;
        merged = true;
      }
    }
    if (!merged) record.events.push_back({model::EventKind::kDroppedEvents, record.start_ns, delta, 0});
    record.flags |= model::kStepPartial;
    record.canonicalize();
    drops_reported_ = lost;
  }
  sender_.addKernels(out.new_kernels);
  sender_.addStrings(out.new_strings);
  Status s = sender_.send(std::move(record));
  if (s.isOk()) {
    std::lock_guard lock(mu_);
    ++stats_.steps;
  } else if (s.code() == Status::Code::kResourceExhausted) {
    {
      std::lock_guard lock(mu_);
      ++stats_.records_dropped;
    }
    shimLogOnce(send_full_logged_, "argusd unreachable and the send buffer full; dropping steps (counted in the next record sent)");
  } else {
    goQuiet("argusd refused this rank: " + s.toString());
  }
}

void Collector::DumpRequests::push(uint64_t from, uint64_t to) {
  uint64_t h = head.load(std::memory_order_relaxed);
  if (h - tail.load(std::memory_order_acquire) == kSlots) {
    dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  slots[h % kSlots] = {from, to};
  head.store(h + 1, std::memory_order_release);
}

bool Collector::DumpRequests::pop(Range* out) {
  uint64_t t = tail.load(std::memory_order_relaxed);
  if (t == head.load(std::memory_order_acquire)) return false;
  *out = slots[t % kSlots];
  tail.store(t + 1, std::memory_order_release);
  return true;
}

void Collector::dumpIfRequested() {
  DumpRequests::Range r;
  while (dump_requests_.pop(&r)) dumpSteps(r.from, r.to);
  uint64_t dropped = dump_requests_.dropped.load(std::memory_order_relaxed);
  if (dropped > dumps_dropped_logged_) {
    shimLog("flight recorder: " + std::to_string(dropped - dumps_dropped_logged_) + " dump requests dropped (more than " +
            std::to_string(DumpRequests::kSlots) + " pending at once)");
    std::lock_guard lock(mu_);
    stats_.dumps_failed += dropped - dumps_dropped_logged_;
    dumps_dropped_logged_ = dropped;
  }
}

void Collector::dumpSteps(uint64_t from, uint64_t to) {
  const std::string what = "flight recorder: steps " + stepRange(from, to);
  auto failed = [&](const std::string& why) {
    shimLog(what + ": " + why);
    std::lock_guard lock(mu_);
    ++stats_.dumps_failed;
  };
  if (!recorder_) return failed("not written, the flight recorder is off (ARGUS_FLIGHT_RECORDER_MB=0)");
  try {
    // Which of the requested steps the ring still (or already) holds.
    std::vector<uint64_t> kept = recorder_->keptSteps();
    uint64_t first = 0, last = 0, n = 0;
    for (uint64_t step : kept) {
      if (step < from || step > to) continue;
      if (n++ == 0) first = step;
      last = step;
    }
    std::string held = kept.empty() ? "none" : stepRange(kept.front(), kept.back());
    if (n == 0) return failed("not written, none of them is in the ring (it holds steps " + held + ")");
    std::string json;
    Status st = recorder_->writeChromeTrace(names_, {config_.topology.rank, from, to}, &json);
    if (!st.isOk()) return failed("not written: " + st.toString());
    std::string path = config_.dump_dir + "/argus-" + config_.job + "-rank" + std::to_string(config_.topology.rank) + "-steps" +
                       std::to_string(from) + "-" + std::to_string(to) + "-" + std::to_string(::getpid()) + ".json";
    if (std::string why = writeFileAtomically(path, json); !why.empty()) return failed("not written, " + why);
    std::string line = "flight recorder: wrote " + path + " (steps " + stepRange(first, last) + ", " + std::to_string(n) +
                       (n == 1 ? " step" : " steps");
    if (to - from + 1 != n) line += "; of the requested " + stepRange(from, to) + " the ring holds only " + held;
    shimLog(line + ")");
    std::lock_guard lock(mu_);
    ++stats_.dumps_written;
  } catch (const std::exception& e) {
    failed(std::string("not written: ") + e.what());  // e.g. no memory for the JSON: the job runs on
  }
}

void Collector::goQuiet(const std::string& why) {
  if (quiet_.exchange(true)) return;
  shimLog(why + "; capture off, the job runs on untraced");
  if (stacks_) stacks_->stop();
  nvtx::Recorder::instance().setEnabled(false);
  nccl::Plugin::instance().setEnabled(false);
#ifdef ARGUS_SHIM_CUPTI
  nvtx::Recorder::instance().setRangeListener(nullptr);
  if (gpu_) gpu_->stop();
#endif
}

void Collector::shutdown() {
  if (shut_down_.exchange(true)) return;
  if (::getpid() != owner_pid_) return;  // a fork child: the parent's threads are not ours
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (quiet()) return;
  try {
#ifdef ARGUS_SHIM_CUPTI
    nvtx::Recorder::instance().setRangeListener(nullptr);
    gpu_->stop();  // force-flushes: the last GPU records are queued for the drain below
#endif
    if (stacks_) stacks_->stop();  // its last samples go into the drain below
    collectOnce(true);
    nvtx::Recorder::instance().setEnabled(false);
    nccl::Plugin::instance().setEnabled(false);
    assembler_.flush();
    Status s = sender_.close(std::chrono::milliseconds(config_.exit_flush_ms));
    wire::StepSenderStats st = sender_.stats();
    if (!s.isOk()) {
      shimLog("at exit, " + std::to_string(st.buffered_records + st.spool_records) + " steps not acknowledged by " + config_.host +
              ":" + std::to_string(config_.port) + " (" + s.toString() + ")");
    }
    if (config_.verbose) logCounters();
    if (st.spooled_records + st.spool_adopted + st.spool_dropped > 0) {
      // The spool's one line: what argusd's absence cost, and what waits for the next run.
      shimLog("spool: " + std::to_string(st.spooled_records) + " steps spooled while argusd was unreachable, " +
              std::to_string(st.spool_adopted) + " taken over from an earlier run, " + std::to_string(st.spool_replayed) +
              " replayed, " + std::to_string(st.spool_dropped) + " dropped with the spool full or off, " +
              std::to_string(st.spool_records) + " left" + (st.spool_records > 0 ? " in " + st.spool_path + " for the next run" : "") +
              "; at most " + std::to_string(st.peak_buffered_records) + " steps (" + std::to_string(st.peak_buffered_bytes) +
              " bytes) were held in memory");
    }
  } catch (...) {
    shimLog("exit flush failed; the last steps are lost");
  }
}

void Collector::logCounters() {
  auto n = [](uint64_t v) { return std::to_string(v); };
  CollectorStats c = stats();
  nvtx::NvtxStats v = nvtx_.stats();
  shimLog("counters: " + n(c.steps) + " steps sent, " + n(c.events) + " events, " + n(c.source_drops) + " source drops, " +
          n(c.records_dropped) + " records dropped; nvtx " + n(v.records) + " records, " + n(v.threads) + " threads, " + n(v.dropped) +
          " dropped, " + n(v.unmatched_pops) + " unmatched pops");
  const AssemblerStats& a = assembler_.stats();
  shimLog("assembler: " + n(a.kernels) + " kernels, " + n(a.steps_emitted) + " steps, " + n(a.late_events) + " late, " +
          n(a.invalid_events) + " invalid, " + n(a.buffer_full) + " over the buffer, " + n(a.outside_steps) + " outside steps");
  nccl::NcclStats k = nccl_.stats();
  shimLog("nccl: " + n(k.plugin.contexts) + " communicators, " + n(k.plugin.operations) + " operations (" + n(k.plugin.lost_operations) +
          " lost), " + n(k.records) + " drained (" + n(k.sampled) + " with proxy steps, " + n(k.gpu_timed) + " GPU-timed, " +
          n(k.unknown_ops) + " unknown ops), " + n(k.plugin.orphans) + " orphans, " + n(k.plugin.ignored) + " ignored");
#ifdef ARGUS_SHIM_CUPTI
  cupti::CuptiSourceStats g = gpu_->stats();
  const cupti::DecodeStats& d = g.decode;
  shimLog("cupti: " + n(d.records) + " records (" + n(d.kernels) + " kernels, " + n(d.memcpys) + " memcpys, " + n(d.memsets) +
          " memsets, " + n(d.api_records) + " API, " + n(d.external_correlations) + " ours external, " + n(d.foreign_correlations) +
          " foreign external, " + n(d.skipped_kinds) + " other kinds), launches joined " + n(d.launches_joined) + " unjoined " +
          n(d.launches_unjoined) + ", unknown contexts " + n(d.unknown_contexts) + ", range changes " + n(g.range_changes) +
          ", tag failures " + n(g.tag_failures));
  cupti::ActivityHandover::Stats h = cupti::ActivityHandover::instance().stats();
  shimLog("cupti buffers: " + n(g.buffers.completions) + " ours, " + n(g.buffers.refused) + " refused, " + n(g.cupti_dropped) +
          " records dropped; lent to torch.profiler " + n(g.guest_pauses) + " times" + (g.paused ? " (still lent)" : "") +
          ", its records copied into " + n(g.buffers.adopted) + " buffers of ours (" + n(g.buffers.adopt_refused) + " refused), " +
          n(h.forwarded) + " of its buffers forwarded to it");
  char rate[32] = "";
  if (g.guest_clock) std::snprintf(rate, sizeof rate, "%.6f", g.guest_ns_per_tick);
  shimLog(std::string("cupti clock: ") +
          (g.guest_clock ? "another client's timestamp callback, " + std::string(rate) + " ns per tick"
                         : "CUPTI's own, offset " + std::to_string(g.clock_offset_ns) + " ns") +
          "; " + n(g.clock_epochs) + " clock changes, " + n(d.bad_timestamps) + " bad timestamps");
#endif
}

void Collector::abandonAfterFork() {
  shut_down_.store(true);
  quiet_.store(true);
  nvtx::Recorder::instance().setEnabled(false);
  nccl::Plugin::instance().setEnabled(false);
}

CollectorStats Collector::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace argus::capture::shim
