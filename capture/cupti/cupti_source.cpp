#include "capture/cupti/cupti_source.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

namespace argus::capture::cupti {

namespace {

// Pushes of our external correlation id failing this often: attribution off (one line).
constexpr uint64_t kTagFailuresToGiveUp = 64;

void logToStderr(const char* line) { std::fprintf(stderr, "argus: %s\n", line); }

// The calls that make GPU work: their API records carry the launch time, and CUPTI writes
// our external correlation record only before an API record.
bool isLaunchApi(const char* name) {
  static constexpr const char* kPrefixes[] = {"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset",
                                              "cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset"};
  if (name == nullptr) return false;
  for (const char* p : kPrefixes) {
    if (std::strncmp(name, p, std::strlen(p)) == 0) return true;
  }
  return false;
}

}  // namespace

CuptiSource::CuptiSource(NameTable& names, CuptiSourceOptions options)
    : names_(names),
      options_(std::move(options)),
      buffers_(options_.buffers),
      contexts_(options_.launch_contexts),
      decoder_(names, &contexts_, options_.decoder) {
  // The smallest GPU record (memset) is 88 bytes: one buffer never yields more events.
  scratch_.reserve(buffers_.bufferBytes() / 88 + 1);
}

CuptiSource::~CuptiSource() {
  stop();
  buffers_.unbind();
}

ClockSync::EpochFn CuptiSource::epoch() const { return options_.epoch_clock ? options_.epoch_clock : realtimeNs; }

void CuptiSource::log(const std::string& line) const { (options_.log ? options_.log : logToStderr)(line.c_str()); }

Status CuptiSource::load() {
  if (!api_.loaded()) {
    Status s = loadCuptiApi(options_.library, &api_);
    if (!s) return s;
  }
  if (!buffers_.bind()) return Status::aborted("another CuptiSource owns the CUPTI buffer callbacks");
  return Status::ok();
}

Status CuptiSource::start() {
  if (running()) return Status::ok();
  bool guest_at_start = false;
  // A flush loop that ended by switching the source off may still be finishing that.
  if (flusher_.joinable()) flusher_.join();
  Status s = load();
  if (s) {
    // A driverless machine answers cuptiGetTimestamp; a failure here is not fatal (offset 0).
    clock_.calibrate(api_.getTimestamp, epoch());
    // torch.profiler tracing at CUDA's start: its callbacks stay until it stops.
    guest_at_start = ActivityHandover::instance().guestTracing();
    s = enableAll(!guest_at_start);
  }
  if (!s) {
    log("GPU tracing off: " + s.message());
    return s;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_requested_ = false;
  }
  tag_failure_logged_ = false;
  consecutive_flush_failures_ = 0;
  running_.store(true, std::memory_order_release);
  paused_.store(false, std::memory_order_release);
  tagging_.store(options_.launch_attribution, std::memory_order_release);
  // From here a guest's calls pause and resume us (a guest that started in between is
  // found by attach: we then pause as if it had just registered).
  if (ActivityHandover::instance().attach(this) || guest_at_start) pauseForGuest();
  flusher_ = std::thread([this] { flushLoop(); });
  return Status::ok();
}

Status CuptiSource::enableAll(bool register_callbacks) {
  if (register_callbacks) {
    Status s = ARGUS_CUPTI_CALL(api_, activityRegisterCallbacks(&ActivityBuffers::onBufferRequested, &ActivityBuffers::onBufferCompleted));
    if (!s) return s;
  }
  Status s;
  std::vector<CUpti_ActivityKind> kinds = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  if (options_.memcpy) kinds.push_back(CUPTI_ACTIVITY_KIND_MEMCPY);
  if (options_.memset) kinds.push_back(CUPTI_ACTIVITY_KIND_MEMSET);
  if (options_.launch_attribution) kinds.push_back(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  enabled_kinds_.clear();
  for (CUpti_ActivityKind kind : kinds) {
    s = cuptiStatus(api_, api_.activityEnable(kind), "cuptiActivityEnable(kind " + std::to_string(static_cast<int>(kind)) + ")");
    if (!s) {
      disableAll();
      return s;
    }
    enabled_kinds_.push_back(kind);
  }
  if (options_.launch_attribution) {
    launch_apis_ = selectLaunchApis(true);
    if (launch_apis_ == 0) {
      // No per-API selection in this libcupti: every runtime API call then makes a record.
      s = ARGUS_CUPTI_CALL(api_, activityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
      if (!s) {
        disableAll();
        return s;
      }
      whole_runtime_kind_ = true;
    }
  }
  return Status::ok();
}

uint32_t CuptiSource::selectLaunchApis(bool enable) {
  if (api_.getCallbackName == nullptr || api_.activityEnableDriverApi == nullptr || api_.activityEnableRuntimeApi == nullptr) return 0;
  uint32_t n = 0;
  // Callback ids only grow between releases; a newer library's extra ids fail the name lookup.
  for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE + 256; ++cbid) {
    const char* name = nullptr;
    if (api_.getCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS || !isLaunchApi(name)) continue;
    if (api_.activityEnableDriverApi(cbid, enable ? 1 : 0) == CUPTI_SUCCESS) ++n;
  }
  for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE + 256; ++cbid) {
    const char* name = nullptr;
    if (api_.getCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS || !isLaunchApi(name)) continue;
    if (api_.activityEnableRuntimeApi(cbid, enable ? 1 : 0) == CUPTI_SUCCESS) ++n;
  }
  return n;
}

void CuptiSource::disableAll() {
  // Only what we enabled: another client's kinds stay as they are (but see cupti.md: CUPTI
  // keeps one enable state per kind, shared by every client in the process).
  for (CUpti_ActivityKind kind : enabled_kinds_) api_.activityDisable(kind);
  enabled_kinds_.clear();
  if (launch_apis_ != 0) selectLaunchApis(false);
  launch_apis_ = 0;
  if (whole_runtime_kind_) api_.activityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
  whole_runtime_kind_ = false;
}

void CuptiSource::stop() {
  ActivityHandover::instance().detach(this);
  tagging_.store(false, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  if (!running_.exchange(false, std::memory_order_acq_rel)) return;
  if (paused_.exchange(false, std::memory_order_acq_rel)) return;  // the guest's kinds and callbacks: left to it
  disableAll();
  // Forced: also buffers with records CUPTI has not completed; they land in our queue.
  api_.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void CuptiSource::switchOff(const std::string& why) {
  ActivityHandover::instance().detach(this);
  tagging_.store(false, std::memory_order_release);
  if (!running_.exchange(false, std::memory_order_acq_rel)) return;
  disableAll();
  api_.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  log("GPU tracing switched off: " + why);
}

void CuptiSource::flushLoop() {
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::milliseconds(std::max(1, options_.flush_interval_ms));
  const auto calibrate_every = std::chrono::milliseconds(std::max(1, options_.calibrate_interval_ms));
  auto next_calibration = Clock::now() + calibrate_every;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_requested_ && running()) {
    wake_.wait_for(lock, interval, [this] { return stop_requested_; });
    if (stop_requested_) break;
    lock.unlock();
    if (!paused_.load(std::memory_order_acquire)) flushOnce();  // lent: buffers are the guest's
    if (Clock::now() >= next_calibration) {
      clock_.calibrate(api_.getTimestamp, epoch());
      next_calibration = Clock::now() + calibrate_every;
    }
    calibrateGuestClock();  // every flush: its rate sharpens as the baseline grows
    lock.lock();
  }
}

void CuptiSource::flushOnce() {
  // Default flush: only buffers whose records are all complete (no forced flush while the
  // job runs: it would hand back records CUPTI has not finished writing).
  CUptiResult rc = api_.activityFlushAll(0);
  flushes_.fetch_add(1, std::memory_order_relaxed);
  if (rc != CUPTI_SUCCESS) {
    flush_failures_.fetch_add(1, std::memory_order_relaxed);
    if (++consecutive_flush_failures_ >= options_.max_flush_failures) {
      switchOff(cuptiStatus(api_, rc, "cuptiActivityFlushAll(0)").message() + ", " +
                std::to_string(consecutive_flush_failures_) + " times in a row");
    }
    return;
  }
  consecutive_flush_failures_ = 0;
  size_t dropped = 0;
  if (api_.activityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped != 0) {
    cupti_dropped_.fetch_add(dropped, std::memory_order_relaxed);
  }
  uint64_t tag_failures = tag_failures_.load(std::memory_order_relaxed);
  if (tag_failures >= kTagFailuresToGiveUp && !tag_failure_logged_) {
    // Attribution degrades (kernels keep their GPU start); the kernels themselves still flow.
    tag_failure_logged_ = true;
    tagging_.store(false, std::memory_order_release);
    log("GPU launch attribution off: " +
        cuptiStatus(api_, static_cast<CUptiResult>(last_tag_error_.load(std::memory_order_relaxed)),
                    "cuptiActivityPushExternalCorrelationId(CUSTOM2)")
            .message());
  }
}

void CuptiSource::onRangeChange(uint32_t thread, int64_t ts_ns) {
  // Whether this thread has our id on CUPTI's CUSTOM2 stack (only we use CUSTOM2): one id
  // per thread, replaced at every change, and popped at the first change after tagging
  // stopped, so that no stale id keeps making records for another CUPTI client to see.
  thread_local bool has_id = false;
  if (!tagging_.load(std::memory_order_acquire)) {
    if (has_id) {
      api_.activityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, nullptr);
      has_id = false;
    }
    return;
  }
  range_changes_.fetch_add(1, std::memory_order_relaxed);
  uint64_t id = contexts_.open(thread, ts_ns);
  CUptiResult pop = has_id ? api_.activityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, nullptr) : CUPTI_SUCCESS;
  CUptiResult push = api_.activityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id);
  has_id = push == CUPTI_SUCCESS;
  CUptiResult bad = push != CUPTI_SUCCESS ? push : pop;
  if (bad != CUPTI_SUCCESS) {
    last_tag_error_.store(static_cast<int>(bad), std::memory_order_relaxed);
    tag_failures_.fetch_add(1, std::memory_order_relaxed);
  }
}

void CuptiSource::setLaunchAttribution(bool on) {
  tagging_.store(on && options_.launch_attribution && running(), std::memory_order_release);
}

size_t CuptiSource::drain(EventSink& sink, bool final) {
  const bool wait = options_.launch_attribution && !final;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  size_t events = 0;
  bool decoded = false;
  ActivityBuffers::Completed c;
  while (buffers_.popCompleted(&c)) {
    decoded = true;
    decoder_.setClock(clockFor(c.clock_epoch));
    scratch_.clear();
    decoder_.decodeBuffer(api_.activityGetNextRecord, c.data, c.valid, &scratch_);
    buffers_.recycle(c);
    if (wait) holdUnjoined(now);
    if (!scratch_.empty()) sink.onEvents(scratch_);
    events += scratch_.size();
  }
  if (decoded) ++batch_;
  return events + releaseWaiting(sink, !wait, now);
}

void CuptiSource::holdUnjoined(int64_t now_ns) {
  size_t kept = 0;
  for (const TraceEvent& e : scratch_) {
    if (e.launch_ns == kNoTime && e.correlation != 0 && waiting_.size() < kMaxWaiting) {
      waiting_.push_back({e, batch_, now_ns});
    } else {
      scratch_[kept++] = e;
    }
  }
  scratch_.resize(kept);
}

size_t CuptiSource::releaseWaiting(EventSink& sink, bool all, int64_t now_ns) {
  if (waiting_.empty()) return 0;
  ready_.clear();
  size_t kept = 0;
  for (Waiting& w : waiting_) {
    bool joined = decoder_.rejoin(&w.event);
    if (joined || all || batch_ >= w.batch + 2 || now_ns - w.since_ns >= kLaunchWaitNs) {
      ready_.push_back(w.event);
    } else {
      waiting_[kept++] = w;
    }
  }
  waiting_.resize(kept);
  if (!ready_.empty()) sink.onEvents(ready_);
  return ready_.size();
}

void CuptiSource::pauseForGuest() {
  if (paused_.exchange(true, std::memory_order_acq_rel)) return;
  guest_pauses_.fetch_add(1, std::memory_order_relaxed);
  // Tags would reach the guest as records of a kind it does not know; each thread pops its
  // id at its next range change.
  tagging_.store(false, std::memory_order_release);
  // Our buffers come back to our callback before the guest's replaces it.
  api_.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  log("GPU tracing lent to another CUPTI client (torch.profiler) until it stops: its records are copied to us");
}

void CuptiSource::resumeAfterGuest() {
  if (!paused_.load(std::memory_order_acquire)) return;
  CUptiResult rc = api_.activityRegisterCallbacks(&ActivityBuffers::onBufferRequested, &ActivityBuffers::onBufferCompleted);
  // The guest disabled what it enabled; ours stayed on (the handover kept them), but its
  // DRIVER / RUNTIME disables wiped the per-API selection.
  for (CUpti_ActivityKind kind : enabled_kinds_) api_.activityEnable(kind);
  if (launch_apis_ != 0) launch_apis_ = selectLaunchApis(true);
  if (whole_runtime_kind_) api_.activityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  if (rc != CUPTI_SUCCESS) {
    // Stays paused (switchOff would take the handover's lock, held here): no records, no tags.
    log("GPU tracing stays off: " + cuptiStatus(api_, rc, "cuptiActivityRegisterCallbacks").message() + " after torch.profiler stopped");
    return;
  }
  paused_.store(false, std::memory_order_release);
  tagging_.store(options_.launch_attribution, std::memory_order_release);
  log("GPU tracing resumed: the other CUPTI client stopped");
}

void CuptiSource::observeGuestBuffer(uint8_t* buffer, size_t valid) {
  if (running()) buffers_.adopt(buffer, valid, api_.activityGetNextRecord);
}

void CuptiSource::beforeClockChange() {
  if (running() && !paused_.load(std::memory_order_acquire)) api_.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void CuptiSource::clockChanged(CUpti_TimestampCallbackFunc ticks) {
  // The new epoch first: a buffer completed from now on holds records of the new clock. The
  // drain waits on the lock while the new clock is calibrated (its first reading takes 2 ms).
  std::lock_guard<std::mutex> lock(clock_mu_);
  if (eras_.size() == kKeptEras) eras_.erase(eras_.begin());
  ClockEra& era = eras_.emplace_back(ClockEra{buffers_.newClockEpoch(), ticks, nullptr});
  if (ticks == nullptr) return;
  era.guest = std::make_shared<ClockSync>();
  if (!era.guest->calibrateTicks(ticks, epoch())) log("GPU times may be off: the timestamp callback another CUPTI client installed could not be calibrated");
}

void CuptiSource::calibrateGuestClock() {
  std::lock_guard<std::mutex> lock(clock_mu_);
  const ClockEra& era = eras_.back();
  if (era.guest != nullptr) era.guest->calibrateTicks(era.ticks, epoch());
}

ClockMap CuptiSource::clockFor(uint32_t epoch) {
  std::lock_guard<std::mutex> lock(clock_mu_);
  auto era = std::find_if(eras_.rbegin(), eras_.rend(), [epoch](const ClockEra& e) { return epoch >= e.first_epoch; });
  const ClockEra& e = era != eras_.rend() ? *era : eras_.front();
  return e.guest != nullptr ? e.guest->map() : clock_.map();
}

bool CuptiSource::usesKind(CUpti_ActivityKind kind) const {
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME && whole_runtime_kind_) return true;
  return std::find(enabled_kinds_.begin(), enabled_kinds_.end(), kind) != enabled_kinds_.end();
}

CuptiSourceStats CuptiSource::stats() const {
  CuptiSourceStats s;
  s.buffers = buffers_.stats();
  s.decode = decoder_.stats();
  s.flushes = flushes_.load(std::memory_order_relaxed);
  s.flush_failures = flush_failures_.load(std::memory_order_relaxed);
  s.cupti_dropped = cupti_dropped_.load(std::memory_order_relaxed);
  s.range_changes = range_changes_.load(std::memory_order_relaxed);
  s.tag_failures = tag_failures_.load(std::memory_order_relaxed);
  s.launch_apis = launch_apis_;
  s.guest_pauses = guest_pauses_.load(std::memory_order_relaxed);
  s.paused = paused_.load(std::memory_order_relaxed);
  s.clock_offset_ns = clock_.offset();
  s.clock_uncertainty_ns = clock_.uncertainty();
  {
    std::lock_guard<std::mutex> lock(clock_mu_);
    const ClockEra& era = eras_.back();
    s.guest_clock = era.guest != nullptr;
    if (s.guest_clock) s.guest_ns_per_tick = era.guest->map().ns_per_tick;
  }
  s.clock_epochs = buffers_.clockEpoch();
  s.running = running();
  return s;
}

}  // namespace argus::capture::cupti
