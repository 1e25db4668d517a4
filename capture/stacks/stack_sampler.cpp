#include "capture/stacks/stack_sampler.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <chrono>

namespace argus::capture::stacks {
namespace {

uint64_t idOf(std::string_view text) {
  return FrameTable::idOfText(text);
}

// The stack of samples beyond max_stacks: one frame, kOverflowText.
uint64_t overflowStack() {
  uint64_t frame = idOf(StackSampler::kOverflowText);
  return StackTable::fold(&frame, 1);
}

int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

StackSampler::StackSampler(StackSamplerOptions options)
    : options_(std::move(options)),
      table_(options_.max_stacks),
      ring_(options_.ring_slots),
      threads_(new ThreadFrames[options_.max_threads]),
      keys_(ThreadFrames::kMaxDepth),
      ids_(ThreadFrames::kMaxDepth + 2),
      truncated_id_(idOf(kTruncatedText)),
      overflow_id_(overflowStack()) {
  python_ = "no Python interpreter found yet";
}

StackSampler::~StackSampler() {
  stop();
}

int64_t StackSampler::now() const {
  if (options_.clock_ns != nullptr) return options_.clock_ns();
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void StackSampler::start() {
  if (options_.hz <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void StackSampler::stop() {
  {
    std::lock_guard lock(thread_mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StackSampler::run() {
  // The job's signals are for its own threads; ours must not take them (a SIGINT handled
  // here would not reach Python's main thread promptly).
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  pthread_setname_np(pthread_self(), "argus-stacks");
  using Clock = std::chrono::steady_clock;
  const auto period = std::chrono::nanoseconds(1'000'000'000 / options_.hz);
  auto next = Clock::now();  // the first round at once
  std::unique_lock lock(thread_mu_);
  while (!stop_ && !off_.load(std::memory_order_relaxed)) {
    if (wake_.wait_until(lock, next, [this] { return stop_; })) break;
    lock.unlock();
    sampleOnce();
    lock.lock();
    // Until an interpreter is found, look once a second: a process without Python costs
    // one wake-up a second, not `hz`.
    next += python_found_.load(std::memory_order_relaxed) ? period : std::chrono::nanoseconds(1'000'000'000);
    auto t = Clock::now();
    if (next < t) next = t + period;  // fell behind (a stopped process): no burst of catch-up rounds
  }
}

bool StackSampler::findInterpreter() {
  if (!reader_.usable()) {
    switchOff("cannot read this process's memory (process_vm_readv and /proc/self/mem refused)");
    return false;
  }
  std::string why;
  switch (findPython(reader_, &runtime_, &why)) {
    case FindResult::kNotYet: return false;
    case FindResult::kUnsupported: switchOff(why); return false;
    case FindResult::kFound: break;
  }
  walker_ = std::make_unique<PythonWalker>(runtime_, reader_);
  frames_ = std::make_unique<FrameTable>(runtime_, reader_, options_.frame_slots);
  {
    std::lock_guard lock(pending_mu_);
    python_ = "CPython " + std::to_string(runtime_.layout.major) + "." + std::to_string(runtime_.layout.minor) + " (" +
              runtime_.layout.source + "), " + reader_.methodName();
  }
  python_found_.store(true, std::memory_order_relaxed);
  return true;
}

int StackSampler::sampleOnce() {
  if (off_.load(std::memory_order_relaxed)) return 0;
  ticks_.fetch_add(1, std::memory_order_relaxed);
  if (walker_ == nullptr && !findInterpreter()) return 0;
  const int64_t t0 = monotonicNs();
  int n = walker_->walk(threads_.get(), options_.max_threads);
  const WalkStats& ws = walker_->stats();
  walk_failures_.store(ws.failed_walks, std::memory_order_relaxed);
  bad_threads_.store(ws.bad_threads, std::memory_order_relaxed);
  if (n < 0) {
    if (++failed_ticks_ >= kMaxFailedTicks) switchOff("the interpreter's thread list stopped reading");
    return 0;
  }
  failed_ticks_ = 0;
  const int64_t ts = now();
  for (int i = 0; i < n; ++i) sampleThread(threads_[i], ts);
  if (options_.native_leaf) leaf_.sweep();
  bad_frames_.store(ws.bad_frames + frames_->stats().bad_code, std::memory_order_relaxed);
  sample_ns_.fetch_add(static_cast<uint64_t>(monotonicNs() - t0), std::memory_order_relaxed);
  return n;
}

void StackSampler::sampleThread(const ThreadFrames& t, int64_t ts_ns) {
  std::string_view leaf = options_.native_leaf ? leaf_.leafOf(t.tid) : std::string_view();
  size_t count = 0;
  if (!leaf.empty()) ids_[count++] = idOf(leaf);
  frames_->resolve(t.code, t.depth, keys_.data(), ids_.data() + count);
  count += t.depth;
  if (t.truncated) ids_[count++] = truncated_id_;
  uint64_t stack = StackTable::fold(ids_.data(), count);
  switch (table_.remember(stack)) {
    case StackTable::Seen::kKnown: break;
    case StackTable::Seen::kNew:
      describeStack(stack, leaf, t);
      stacks_.fetch_add(1, std::memory_order_relaxed);
      break;
    case StackTable::Seen::kFull:
      stack = overflow_id_;
      overflowed_.fetch_add(1, std::memory_order_relaxed);
      if (!overflow_described_) {
        overflow_described_ = true;
        std::lock_guard lock(pending_mu_);
        pending_.push_back({overflow_id_, {kOverflowText}});
      }
      break;
  }
  if (ring_.push({ts_ns, stack, t.tid})) {
    samples_.fetch_add(1, std::memory_order_relaxed);
  } else {
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

void StackSampler::describeStack(uint64_t stack, std::string_view leaf, const ThreadFrames& t) {
  model::StackDictEntry e;
  e.stack_id = stack;
  e.frames.reserve(t.depth + 2);
  if (!leaf.empty()) e.frames.emplace_back(leaf);
  for (uint32_t i = 0; i < t.depth; ++i) e.frames.push_back(frames_->text(keys_[i]));
  if (t.truncated) e.frames.emplace_back(kTruncatedText);
  std::lock_guard lock(pending_mu_);
  pending_.push_back(std::move(e));
}

void StackSampler::switchOff(const std::string& why) {
  if (off_.exchange(true)) return;
  if (options_.log) options_.log("stack sampler off: " + why);
}

void StackSampler::drain(const std::function<void(std::span<const model::StackDictEntry>)>& on_stacks,
                         const std::function<void(const TraceEvent&)>& on_event) {
  // Samples first (their positions), entries second: every sample taken here was published
  // after its stack's entry, so the entry is in this batch or an earlier one.
  const uint64_t head = ring_.head();
  draining_.clear();
  {
    std::lock_guard lock(pending_mu_);
    draining_.swap(pending_);
  }
  if (!draining_.empty()) on_stacks(draining_);
  TraceEvent e;
  e.type = EventType::kStackSample;
  for (uint64_t pos = ring_.tail(); pos < head; ++pos) {
    const Sample& s = ring_.at(pos);
    e.start_ns = e.end_ns = s.ts_ns;
    e.id = s.stack;
    e.thread = s.tid;
    on_event(e);
  }
  ring_.release(head);
}

StackSamplerStats StackSampler::stats() const {
  StackSamplerStats s;
  s.ticks = ticks_.load(std::memory_order_relaxed);
  s.samples = samples_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.stacks = stacks_.load(std::memory_order_relaxed);
  s.overflowed = overflowed_.load(std::memory_order_relaxed);
  s.walk_failures = walk_failures_.load(std::memory_order_relaxed);
  s.bad_threads = bad_threads_.load(std::memory_order_relaxed);
  s.bad_frames = bad_frames_.load(std::memory_order_relaxed);
  s.memory_reads = reader_.reads();
  s.read_errors = reader_.errors();
  s.sample_ns = sample_ns_.load(std::memory_order_relaxed);
  s.python = python_found_.load(std::memory_order_relaxed);
  s.off = off_.load(std::memory_order_relaxed) || options_.hz <= 0;
  return s;
}

std::string StackSampler::describe() const {
  std::lock_guard lock(pending_mu_);
  return python_;
}

}  // namespace argus::capture::stacks
