// StepSender (see step_sender.h and docs/wire/protocol.md).
#include "wire/step_sender.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "wire/tcp.h"

namespace argus::wire {

namespace {

using Clock = std::chrono::steady_clock;

int64_t clockNs(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}


// Close codes after which a new session may succeed; any other code is final.
bool retryableClose(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:                 // server shutting down
    case Status::Code::kUnavailable:
    case Status::Code::kIoError:            // the server's store failed a write
    case Status::Code::kResourceExhausted:  // server over a limit
    case Status::Code::kAborted:
      return true;
    default:
      return false;
  }
}

// Dictionary entries per frame: keeps each Dictionary frame well under the frame limit.
size_t dictEntryBytes(const model::KernelDictEntry& e) { return 64 + e.name.size(); }
size_t dictEntryBytes(const model::StackDictEntry& e) {
  size_t b = 32;
  for (const auto& f : e.frames) b += 16 + f.size();
  return b;
}
size_t dictEntryBytes(const model::StringDictEntry& e) { return 32 + e.text.size(); }

}  // namespace

StepSender::StepSender(StepSenderOptions options)
    : options_(std::move(options)), encoder_(options_.codec), batch_cap_(std::max<size_t>(1, options_.max_batch_records)) {
  server_limits_.max_frame_bytes = options_.max_server_frame_bytes;
  adopting_ = !options_.spool_dir.empty() && options_.spool_adopt;
  if (!options_.spool_dir.empty()) {
    spool_ = std::make_unique<StepSpool>(StepSpoolOptions{.dir = options_.spool_dir,
                                                          .job = options_.job,
                                                          .rank = options_.topology.rank,
                                                          .max_bytes = options_.spool_max_bytes,
                                                          .log = options_.log});
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  thread_ = std::thread([this] { run(); });
}

StepSender::~StepSender() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  space_cv_.notify_all();
  acked_cv_.notify_all();
  wake();
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void StepSender::wake() {
  if (!wake_pending_.exchange(true, std::memory_order_acq_rel)) {
    uint64_t one = 1;
    ssize_t n = ::write(wake_fd_, &one, sizeof one);
    (void)n;
  }
}

namespace {

// argusd refuses dictionary text over kMaxDictTextBytes (a session lost for one name):
// cut it instead, marked, at a UTF-8 character boundary.
void fitText(std::string* s) {
  static constexpr std::string_view kMark = "...[cut]";
  if (s->size() <= kMaxDictTextBytes) return;
  size_t n = kMaxDictTextBytes - kMark.size();
  while (n > 0 && (static_cast<unsigned char>((*s)[n]) & 0xC0) == 0x80) --n;
  s->resize(n);
  s->append(kMark);
}

}  // namespace

void StepSender::addKernels(std::span<const model::KernelDictEntry> entries) {
  std::lock_guard lock(mu_);
  for (const auto& e : entries) {
    if (!kernel_ids_.insert(e.signature).second) continue;
    kernels_.push_back(e);
    fitText(&kernels_.back().name);
  }
}

void StepSender::addStacks(std::span<const model::StackDictEntry> entries) {
  std::lock_guard lock(mu_);
  for (const auto& e : entries) {
    if (!stack_ids_.insert(e.stack_id).second) continue;
    stacks_.push_back(e);
    auto& frames = stacks_.back().frames;
    if (frames.size() > kMaxStackFrames) frames.resize(kMaxStackFrames);  // leaf first: the root end goes
    for (std::string& f : frames) fitText(&f);
  }
}

void StepSender::addStrings(std::span<const model::StringDictEntry> entries) {
  std::lock_guard lock(mu_);
  for (const auto& e : entries) {
    if (!string_ids_.insert(e.id).second) continue;
    strings_.push_back(e);
    fitText(&strings_.back().text);
  }
}

Status StepSender::send(const model::StepRecord& record) {
  model::StepRecord copy = record;
  return enqueue(std::move(copy));
}

Status StepSender::send(model::StepRecord&& record) { return enqueue(std::move(record)); }

Status StepSender::enqueue(model::StepRecord&& record) {
  if (record.rank != options_.topology.rank) {
    return Status::invalidArgument("record of rank " + std::to_string(record.rank) + " sent on the session of rank " +
                                   std::to_string(options_.topology.rank));
  }
  size_t bytes = model::memoryBytes(record);
  {
    std::unique_lock lock(mu_);
    auto full = [&] {
      return queue_.size() >= options_.max_buffered_records ||
             (!queue_.empty() && queued_bytes_ + bytes > options_.max_buffered_bytes);
    };
    if (spool_ && (spool_in_use_ || full()) && failure_.isOk() && !stopping_) {
      // Once one record is in the spool, every later one follows it there until it is
      // empty: the spool holds the newest records, so the order of sending stays the
      // order of send(). An earlier run's file is taken over only by a spool that has none
      // yet: wait for that look (the I/O thread's first act, local disk only).
      space_cv_.wait(lock, [&] { return !adopting_ || stopping_; });
      if (stopping_) return Status::aborted("StepSender is closed");
      spool_in_use_ = true;
      ++spool_appends_;
      lock.unlock();
      return spoolRecord(record);
    }
    if (full() && failure_.isOk() && !stopping_) {
      space_cv_.wait_for(lock, options_.send_timeout, [&] { return !full() || !failure_.isOk() || stopping_; });
    }
    if (!failure_.isOk()) return failure_;
    if (stopping_) return Status::aborted("StepSender is closed");
    if (full()) {
      return Status::resourceExhausted("send buffer full (" + std::to_string(queue_.size()) + " records, " +
                                       std::to_string(queued_bytes_) + " bytes unacknowledged)");
    }
    queue_.push_back(Pending{std::move(record), bytes, Clock::now()});
    queued_bytes_ += bytes;
    stats_.peak_buffered_records = std::max(stats_.peak_buffered_records, queue_.size());
    stats_.peak_buffered_bytes = std::max(stats_.peak_buffered_bytes, queued_bytes_);
    ++stats_.records_submitted;
  }
  wake();
  return Status::ok();
}

Dictionary StepSender::unspooledDictLocked() {
  Dictionary d;
  d.kernels.assign(kernels_.begin() + static_cast<std::ptrdiff_t>(spool_kernels_), kernels_.end());
  d.stacks.assign(stacks_.begin() + static_cast<std::ptrdiff_t>(spool_stacks_), stacks_.end());
  d.strings.assign(strings_.begin() + static_cast<std::ptrdiff_t>(spool_strings_), strings_.end());
  spool_kernels_ = kernels_.size();
  spool_stacks_ = stacks_.size();
  spool_strings_ = strings_.size();
  return d;
}

Status StepSender::spoolRecord(const model::StepRecord& record) {
  // The caller's thread writes the file (in the capture shim: the collector thread, never a
  // training thread); mu_ is not held meanwhile, so the I/O thread goes on.
  Dictionary dict;
  {
    std::lock_guard lock(mu_);
    dict = unspooledDictLocked();  // written with the record, so that the file decodes alone
  }
  Status s = spool_->append(dict, record);
  {
    std::lock_guard lock(mu_);
    --spool_appends_;
    if (s.isOk()) {
      ++stats_.records_submitted;
      ++stats_.spooled_records;
    } else {
      ++stats_.spool_dropped;
      // A spool that holds nothing (it could not even be created) is not in use: records
      // go to memory again while there is room.
      if (spool_appends_ == 0 && spool_->records() == 0 && queue_.empty()) spool_in_use_ = false;
    }
  }
  if (!s.isOk()) return Status::resourceExhausted("send buffer full, and the spool refused the record: " + s.toString());
  wake();
  return Status::ok();
}

bool StepSender::allAckedLocked() const { return queue_.empty() && (!spool_ || spool_->records() == 0); }

void StepSender::releaseSpoolLocked() {
  if (!spool_ || !spool_in_use_ || spool_appends_ > 0 || !queue_.empty()) return;
  if (!spool_->removeIfDrained()) return;
  spool_in_use_ = false;
  spool_kernels_ = spool_stacks_ = spool_strings_ = 0;  // a new file starts with the whole dictionary
}

void StepSender::adoptSpool() {
  Dictionary dict;
  uint64_t n = spool_->adoptOrphan(&dict);
  addKernels(dict.kernels);
  addStacks(dict.stacks);
  addStrings(dict.strings);
  std::lock_guard lock(mu_);
  adopting_ = false;
  space_cv_.notify_all();
  if (n == 0) return;
  spool_in_use_ = true;
  stats_.records_submitted += n;
  stats_.spool_adopted += n;
}

void StepSender::spillAtClose() {
  std::deque<Pending> left;
  Dictionary dict;
  {
    std::lock_guard lock(mu_);
    if (!spool_ || queue_.empty()) return;
    left.swap(queue_);
    queued_bytes_ = 0;
    sent_in_session_ = 0;
    dict = unspooledDictLocked();
  }
  uint64_t spooled = 0;
  for (const Pending& p : left) {
    if (!spool_->append(dict, p.record).isOk()) break;
    dict = Dictionary{};
    ++spooled;
  }
  std::lock_guard lock(mu_);
  stats_.spooled_records += spooled;
  stats_.spool_dropped += left.size() - spooled;
}

Status StepSender::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  ++flush_waiters_;
  lock.unlock();
  wake();  // a lingering partial batch goes out now
  lock.lock();
  acked_cv_.wait_for(lock, timeout, [&] { return allAckedLocked() || !failure_.isOk() || stopping_; });
  --flush_waiters_;
  if (!failure_.isOk()) return failure_;
  if (!allAckedLocked()) {
    uint64_t spooled = spool_ ? spool_->records() : 0;
    return Status::aborted("flush timed out with " + std::to_string(queue_.size() + spooled) + " records unacknowledged" +
                           (spooled > 0 ? " (" + std::to_string(spooled) + " in the spool)" : "") +
                           (stats_.connected ? "" : " (not connected to argusd)"));
  }
  return Status::ok();
}

Status StepSender::close(std::chrono::milliseconds timeout) {
  Status s = flush(timeout);
  {
    std::lock_guard lock(mu_);
    goodbye_ = true;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  space_cv_.notify_all();
  acked_cv_.notify_all();
  wake();
  if (thread_.joinable()) thread_.join();
  if (!s.isOk()) spillAtClose();
  return s;
}

Status StepSender::status() const {
  std::lock_guard lock(mu_);
  return failure_;
}

StepSenderStats StepSender::stats() const {
  std::lock_guard lock(mu_);
  StepSenderStats s = stats_;
  s.buffered_records = queue_.size();
  s.buffered_bytes = queued_bytes_;
  if (spool_) {
    StepSpoolStats sp = spool_->stats();
    s.spool_records = sp.records;
    s.spool_bytes = sp.bytes;
    s.spool_lost = sp.lost;
    s.spool_path = spool_->path();
  }
  return s;
}

bool StepSender::sleepFor(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  stop_cv_.wait_for(lock, d, [&] { return stopping_ || !failure_.isOk(); });
  return !stopping_ && failure_.isOk();
}

void StepSender::run() {
  if (spool_ && options_.spool_adopt) adoptSpool();
  auto backoff = options_.backoff_initial;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || !failure_.isOk()) break;
    }
    if (reconnect_after_.count() > 0) {
      auto wait = reconnect_after_;
      reconnect_after_ = std::chrono::milliseconds(0);
      if (!sleepFor(wait)) break;
    }
    auto fd = connectTcp(options_.host, options_.port, options_.connect_timeout);
    if (!fd.isOk()) {
      {
        std::lock_guard lock(mu_);
        ++stats_.connect_failures;
      }
      if (!sleepFor(backoff)) break;
      backoff = std::min(backoff * 2, options_.backoff_max);
      continue;
    }
    int sock = fd.value();
    Status hs = handshake(sock);
    if (!hs.isOk()) {
      ::close(sock);
      if (!sleepFor(backoff)) break;
      backoff = std::min(backoff * 2, options_.backoff_max);
      continue;
    }
    backoff = options_.backoff_initial;
    runSession(sock);
    ::close(sock);
    {
      std::lock_guard lock(mu_);
      stats_.connected = false;
    }
    if (!sleepFor(options_.backoff_initial)) break;
  }
  std::lock_guard lock(mu_);
  stats_.connected = false;
  space_cv_.notify_all();
  acked_cv_.notify_all();
}

Status StepSender::handshake(int fd) {
  Hello hello;
  hello.job = options_.job;
  hello.auth_token = options_.auth_token;
  hello.topology = options_.topology;
  hello.clock_unix_ns = clockNs(CLOCK_REALTIME);
  hello.clock_monotonic_ns = clockNs(CLOCK_MONOTONIC);
  hello.client = options_.client;
  ARGUS_RETURN_IF_ERROR(writeAll(fd, encodeHello(hello), options_.handshake_timeout));
  FrameConnection conn(fd);
  conn.setLimits(server_limits_);
  Status result = Status::unavailable("no Welcome from argusd");
  auto deadline = Clock::now() + options_.handshake_timeout;
  for (;;) {
    // Wait for the reply without blocking close(): the wake fd interrupts the wait.
    bool readable = false;
    while (!readable) {
      {
        std::lock_guard lock(mu_);
        if (stopping_) {
          conn.release();
          return Status::aborted("StepSender is closing");
        }
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) break;
      pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      if (::poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 200))) > 0) {
        if (fds[1].revents & POLLIN) {
          uint64_t v;
          ssize_t n = ::read(wake_fd_, &v, sizeof v);
          (void)n;
          wake_pending_.store(false, std::memory_order_release);
        }
        readable = (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
      }
    }
    if (!readable) {
      result = Status::unavailable("no Welcome from argusd within " + std::to_string(options_.handshake_timeout.count()) + " ms");
      break;
    }
    ServerMessage m;
    Status s = conn.readServerMessage(&m, options_.handshake_timeout);
    if (!s.isOk()) {
      result = s.withContext("waiting for Welcome");
      break;
    }
    if (m.kind == ServerMessage::Kind::kWelcome) {
      if (m.welcome.max_frame_bytes >= 4096) {
        max_frame_bytes_ = m.welcome.max_frame_bytes;
      }
      uint32_t bs = m.welcome.block_steps;
      if (bs == 0 || (bs & (bs - 1)) != 0) {
        result = Status::corruption("Welcome names block_steps " + std::to_string(bs) + ", not a power of two");
        break;
      }
      encoder_.setBlockSteps(bs);
      result = Status::ok();
      break;
    }
    if (m.kind == ServerMessage::Kind::kClose) {
      result = m.close.toStatus();
      if (result.isOk()) result = Status::unavailable(m.close.reason);
      if (!retryableClose(m.close.code)) {
        std::lock_guard lock(mu_);
        failure_ = Status::fromCode(m.close.code, "argusd refused the session: " + m.close.reason);
      }
      break;
    }
  }
  // FrameConnection owns nothing beyond this scope: give the fd back.
  conn.release();
  if (!result.isOk()) {
    acked_cv_.notify_all();
    space_cv_.notify_all();
    return result;
  }
  std::lock_guard lock(mu_);
  resend_until_ = sent_in_session_;
  sent_in_session_ = 0;
  session_acked_ = 0;
  if (spool_) spool_->rewind();
  have_last_sent_ = false;
  cut_pending_ = false;
  kernels_sent_ = stacks_sent_ = strings_sent_ = 0;
  encoder_.reset();
  ++stats_.sessions;
  stats_.connected = true;
  return Status::ok();
}

std::chrono::microseconds StepSender::buildOutput() {
  // Under mu_: copy the dictionary entries to send and take stable references to the
  // records (std::deque keeps references valid across push_back; only this thread pops).
  Dictionary dict;
  std::vector<const model::StepRecord*> records;
  uint64_t first_seq = 0;
  bool queue_out = false;  // every buffered record is out: the spool's may follow
  size_t frame_budget = std::min<size_t>(options_.max_batch_bytes, max_frame_bytes_ / 2);
  {
    std::lock_guard lock(mu_);
    size_t dict_bytes = 0;
    while (kernels_sent_ < kernels_.size() && dict_bytes < frame_budget) {
      dict_bytes += dictEntryBytes(kernels_[kernels_sent_]);
      dict.kernels.push_back(kernels_[kernels_sent_++]);
    }
    while (stacks_sent_ < stacks_.size() && dict_bytes < frame_budget) {
      dict_bytes += dictEntryBytes(stacks_[stacks_sent_]);
      dict.stacks.push_back(stacks_[stacks_sent_++]);
    }
    while (strings_sent_ < strings_.size() && dict_bytes < frame_budget) {
      dict_bytes += dictEntryBytes(strings_[strings_sent_]);
      dict.strings.push_back(strings_[strings_sent_++]);
    }
    bool dict_pending = kernels_sent_ < kernels_.size() || stacks_sent_ < stacks_.size() || strings_sent_ < strings_.size();
    if (!dict_pending && !cut_pending_) {
      // Records only once every dictionary entry registered before them is out.
      size_t unsent = queue_.size() - sent_in_session_;
      size_t n = std::min(unsent, batch_cap_);
      // No lingering with a spool backlog behind the buffer: those records are late already.
      if (n > 0 && n < batch_cap_ && flush_waiters_ == 0 && !goodbye_ && !stopping_ && !spool_in_use_) {
        auto due = queue_[sent_in_session_].enqueued + options_.batch_linger;
        auto now = Clock::now();
        if (due > now) {
          n = 0;  // wait for a fuller batch
          if (dict.empty()) return std::max(std::chrono::microseconds(1), std::chrono::duration_cast<std::chrono::microseconds>(due - now));
        }
      }
      first_seq = session_acked_ + sent_in_session_ + (spool_ ? spool_->inFlight() : 0) + 1;
      records.reserve(n);
      for (size_t i = 0; i < n; ++i) records.push_back(&queue_[sent_in_session_ + i].record);
      queue_out = n == unsent;
    }
  }
  if (!dict.empty()) out_ += encodeDictionary(dict);
  if (first_seq == 0) return std::chrono::microseconds(0);
  std::vector<std::string> encoded;
  size_t bytes = 0, from_queue = 0;
  // Encodes one record into the batch. False when the batch must end before it.
  auto add = [&](const model::StepRecord& r) {
    if (!followsLastSent(r)) {
      cut_pending_ = encoded.empty();  // else the next batch starts with it, and cuts then
      return false;
    }
    std::string e;
    encoder_.encode(r, &e);
    if (e.size() + 256 > max_frame_bytes_) {
      std::lock_guard lock(mu_);
      failure_ = Status::invalidArgument("a record of step " + std::to_string(r.step) + " encodes to " +
                                         std::to_string(e.size()) + " bytes, over argusd's frame limit of " +
                                         std::to_string(max_frame_bytes_));
      acked_cv_.notify_all();
      space_cv_.notify_all();
      return false;
    }
    have_last_sent_ = true;
    last_sent_attempt_ = r.attempt;
    last_sent_step_ = r.step;
    bytes += e.size();
    encoded.push_back(std::move(e));
    return true;
  };
  for (const auto* r : records) {
    if (bytes >= frame_budget || !add(*r)) break;
    ++from_queue;
  }
  // The spool's records are newer than every buffered one: they follow once those are out.
  if (spool_ && queue_out && from_queue == records.size()) {
    while (bytes < frame_budget && encoded.size() < batch_cap_ && spool_->peek(&spool_rec_)) {
      if (!add(spool_rec_)) break;
      spool_->take();
    }
    if (encoded.size() == from_queue) {
      std::lock_guard lock(mu_);
      releaseSpoolLocked();  // nothing left to read: a spool emptied by damage goes too
    }
  }
  {
    std::lock_guard lock(mu_);
    if (!failure_.isOk()) return std::chrono::microseconds(0);
  }
  if (encoded.empty()) return std::chrono::microseconds(0);
  out_ += encodeStepBatch(first_seq, encoded);
  std::lock_guard lock(mu_);
  size_t n = encoded.size();
  size_t resent = sent_in_session_ < resend_until_ ? std::min(from_queue, resend_until_ - sent_in_session_) : 0;
  sent_in_session_ += from_queue;
  stats_.records_sent += n;
  stats_.records_resent += resent;
  stats_.record_bytes_sent += bytes;
  ++stats_.frames_sent;
  return std::chrono::microseconds(0);
}

Status StepSender::handleServerFrame(const FrameBody& body) {
  ServerMessage m;
  ARGUS_RETURN_IF_ERROR(decodeServerMessage(body, server_limits_, &m));
  switch (m.kind) {
    case ServerMessage::Kind::kAck: {
      std::lock_guard lock(mu_);
      if (m.ack_up_to <= session_acked_) return Status::ok();
      uint64_t n = m.ack_up_to - session_acked_;
      uint64_t in_spool = spool_ ? spool_->inFlight() : 0;
      if (n > sent_in_session_ + in_spool) {
        return Status::corruption("argusd acknowledged seq " + std::to_string(m.ack_up_to) + " but only " +
                                  std::to_string(session_acked_ + sent_in_session_ + in_spool) + " were sent");
      }
      // A session sends the buffered records first, then the spool's.
      uint64_t from_queue = std::min<uint64_t>(n, sent_in_session_);
      for (uint64_t i = 0; i < from_queue; ++i) {
        queued_bytes_ -= queue_.front().bytes;
        queue_.pop_front();
      }
      sent_in_session_ -= from_queue;
      resend_until_ = resend_until_ > from_queue ? resend_until_ - from_queue : 0;
      if (n > from_queue) {
        spool_->acknowledge(n - from_queue);
        stats_.spool_replayed += n - from_queue;
        releaseSpoolLocked();
      }
      session_acked_ = m.ack_up_to;
      stats_.records_acked += n;
      acked_total_.fetch_add(n, std::memory_order_release);
      space_cv_.notify_all();
      acked_cv_.notify_all();
      return Status::ok();
    }
    case ServerMessage::Kind::kControl:
      if (m.control.kind == Control::Kind::kDraining) {
        reconnect_after_ = std::chrono::milliseconds(m.control.draining_ms);
      } else if (m.control.kind == Control::Kind::kDumpFlightRecorder && options_.on_dump_request) {
        // The sender has no raw events: its owner (capture's Collector) does the dump.
        options_.on_dump_request(m.control.from_step, m.control.to_step);
      }
      return Status::ok();
    case ServerMessage::Kind::kClose: {
      if (m.close.code == Status::Code::kResourceExhausted) {
        // Mid-stream, the only limit is what one StepBatch decodes to: halve the batches of
        // the next session; a single record over it can never be stored.
        if (batch_cap_ == 1) {
          std::lock_guard lock(mu_);
          failure_ = Status::resourceExhausted("argusd refuses even a single record: " + m.close.reason);
          space_cv_.notify_all();
          acked_cv_.notify_all();
          return failure_;
        }
        batch_cap_ = std::max<size_t>(1, batch_cap_ / 2);
      }
      if (retryableClose(m.close.code)) return Status::unavailable("argusd closed the session: " + m.close.reason);
      std::lock_guard lock(mu_);
      failure_ = Status::fromCode(m.close.code, "argusd closed the session: " + m.close.reason);
      space_cv_.notify_all();
      acked_cv_.notify_all();
      return failure_;
    }
    case ServerMessage::Kind::kWelcome:
      return Status::corruption("a second Welcome in one session");
  }
  return Status::ok();
}

void StepSender::runSession(int fd) {
  out_.clear();
  out_off_ = 0;
  in_.clear();
  bool goodbye_sent = false;
  char buf[64 * 1024];
  for (;;) {
    bool want_goodbye = false, cut_now = false;
    {
      std::lock_guard lock(mu_);
      if (!failure_.isOk()) return;
      if (stopping_ && !goodbye_) return;
      // A record that cannot follow the last one sent waits for a new session, which
      // starts once everything sent in this one is acknowledged.
      cut_now = cut_pending_ && sent_in_session_ == 0 && (!spool_ || spool_->inFlight() == 0);
      want_goodbye = !goodbye_sent && ((goodbye_ && allAckedLocked()) || cut_now);
      if (stopping_ && goodbye_ && !allAckedLocked() && out_off_ == out_.size()) return;  // flush failed
    }
    std::chrono::microseconds linger(0);
    if (out_off_ == out_.size()) {
      out_.clear();
      out_off_ = 0;
      if (!goodbye_sent) linger = buildOutput();
      if (want_goodbye && out_.empty()) {
        out_ = encodeGoodbye();
        goodbye_sent = true;
        if (cut_now) {
          std::lock_guard lock(mu_);
          ++stats_.session_cuts;
        }
      }
    }
    if (goodbye_sent && out_off_ == out_.size()) {
      ::shutdown(fd, SHUT_WR);
      FrameConnection conn(fd);
      conn.waitForEof(std::chrono::milliseconds(1000));
      conn.release();
      return;
    }
    pollfd fds[2] = {{fd, static_cast<short>(POLLIN | (out_off_ < out_.size() ? POLLOUT : 0)), 0},
                     {wake_fd_, POLLIN, 0}};
    int timeout_ms = 200;
    if (linger.count() > 0) timeout_ms = static_cast<int>(std::min<int64_t>(200, (linger.count() + 999) / 1000));
    int rc = ::poll(fds, 2, timeout_ms);
    if (rc < 0 && errno != EINTR) return;
    if (fds[1].revents & POLLIN) {
      uint64_t v;
      ssize_t n = ::read(wake_fd_, &v, sizeof v);
      (void)n;
      wake_pending_.store(false, std::memory_order_release);
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0) return;  // server closed
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return;
      if (n > 0) in_.append(buf, static_cast<size_t>(n));
      size_t off = 0;
      while (in_.size() - off >= kFrameHeaderBytes) {
        uint32_t len = 0;
        if (!parseFrameHeader(reinterpret_cast<const uint8_t*>(in_.data() + off), server_limits_, &len).isOk()) return;
        if (in_.size() - off - kFrameHeaderBytes < len) break;
        frame_.assign(in_.data() + off + kFrameHeaderBytes, len);
        off += kFrameHeaderBytes + len;
        if (!handleServerFrame(frame_).isOk()) return;
      }
      in_.erase(0, off);
    }
    if (out_off_ < out_.size() && (fds[0].revents & POLLOUT)) {
      ssize_t n = ::send(fd, out_.data() + out_off_, out_.size() - out_off_, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return;
      if (n > 0) {
        out_off_ += static_cast<size_t>(n);
        std::lock_guard lock(mu_);
        stats_.bytes_sent += static_cast<uint64_t>(n);
      }
    }
  }
}

}  // namespace argus::wire
