// Session (see session.h and docs/wire/protocol.md).
#include "ingest/session.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <limits>

#include "storage/head_entry.h"

namespace argus::ingest {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

constexpr size_t kInitialReadBytes = 8 * 1024;
constexpr size_t kMinReadSpace = 4 * 1024;
// Shrink the read buffer back when idle and above this. StepSender frames stay near 1 MiB,
// so steady large-batch senders keep their buffer instead of regrowing it every frame.
constexpr size_t kKeepReadBytes = 4u << 20;
// The reused decode record is freed after a batch whose largest record exceeded this.
constexpr size_t kKeepScratchBytes = 4u << 20;


size_t dictBytes(const wire::Dictionary& d) {
  size_t bytes = 0;
  for (const auto& k : d.kernels) bytes += sizeof k + k.name.size();
  for (const auto& s : d.stacks) {
    bytes += sizeof s;
    for (const auto& f : s.frames) bytes += sizeof f + f.size();
  }
  for (const auto& s : d.strings) bytes += sizeof s + s.text.size();
  return bytes;
}

}  // namespace

Session::Session(asio::ip::tcp::socket socket, uint64_t id, const SessionContext& ctx)
    : socket_(std::move(socket)), timer_(socket_.get_executor()), frame_timer_(socket_.get_executor()), head_timer_(socket_.get_executor()), id_(id), ctx_(ctx) {
  prehello_limits_ = ctx_.limits;
  prehello_limits_.max_frame_bytes = std::min(ctx_.limits.max_frame_bytes, ctx_.prehello_max_frame_bytes);
  error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  peer_ = ec ? std::string("?") : ep.address().to_string() + ":" + std::to_string(ep.port());
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  ctx_.metrics->sessions_open.fetch_add(1, std::memory_order_relaxed);
  ctx_.metrics->sessions_total.fetch_add(1, std::memory_order_relaxed);
}

Session::~Session() {
  if (!finished_) ctx_.metrics->sessions_open.fetch_sub(1, std::memory_order_relaxed);
}

std::string Session::describe() const {
  std::string s = "session " + std::to_string(id_) + " from " + peer_;
  if (!job_.empty()) s += " (job " + job_ + " rank " + std::to_string(topology_.rank) + ")";
  return s;
}

void Session::start() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    // drain() may have run first (the server stopped between accepting and starting us):
    // the session is already closing and timer_ holds its close timeout; leave both alone.
    if (self->state_ != State::kAwaitHello) return;
    self->timer_.expires_after(self->ctx_.hello_timeout);
    self->timer_.async_wait([self](const error_code& ec) {
      if (ec || self->state_ != State::kAwaitHello) return;
      self->reject(RejectReason::kTimeout, Status::Code::kAborted,
                   "no Hello within " + std::to_string(self->ctx_.hello_timeout.count()) + " ms");
    });
    self->readIfAllowed();
  });
}

void Session::drain() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    if (self->state_ == State::kAwaitHello) {
      self->closeWith(Status::Code::kOk, "server shutting down");
    } else if (self->state_ == State::kStreaming) {
      self->beginEnding(/*draining=*/true);
    } else if (self->state_ == State::kEnding) {
      self->draining_ = true;
    }
  });
}

// --- reading ------------------------------------------------------------------------------

void Session::readIfAllowed() {
  if (reading_ || (state_ != State::kAwaitHello && state_ != State::kStreaming)) return;
  if (inflight_bytes_ >= ctx_.session_inflight_bytes) {
    if (!paused_) ctx_.metrics->backpressure_pauses.fetch_add(1, std::memory_order_relaxed);
    paused_ = true;  // resumed by onCommitted
    return;
  }
  if (ctx_.budget->exhausted()) {
    if (!paused_) ctx_.metrics->backpressure_pauses.fetch_add(1, std::memory_order_relaxed);
    paused_ = true;
    ctx_.budget->whenAvailable([weak = weak_from_this()] {
      if (auto self = weak.lock()) {
        asio::post(self->socket_.get_executor(), [self] {
          self->paused_ = false;
          self->readIfAllowed();
        });
      }
    });
    return;
  }
  if (ctx_.head_full && ctx_.head_full()) {
    if (!paused_) ctx_.metrics->head_full_pauses.fetch_add(1, std::memory_order_relaxed);
    paused_ = true;
    head_timer_.expires_after(ctx_.head_full_retry);
    head_timer_.async_wait([self = shared_from_this()](const error_code& ec) {
      if (ec) return;  // re-armed or cancelled
      self->paused_ = false;
      self->readIfAllowed();
    });
    return;
  }
  paused_ = false;
  // Room for a useful chunk; for a frame being read (its length is already checked), room
  // that grows with the bytes that actually arrived (at most twice them), never the announced
  // length up front: a header alone does not make argusd allocate its frame.
  size_t want = rlen_ + kMinReadSpace;
  if (rlen_ >= wire::kFrameHeaderBytes) {
    uint32_t n = 0;
    if (wire::parseFrameHeader(reinterpret_cast<const uint8_t*>(rbuf_.data()), limits(), &n).isOk()) {
      size_t frame = wire::kFrameHeaderBytes + n;
      if (frame > rlen_) want = std::max(want, std::min(frame, 2 * rlen_));
    }
  }
  if (rbuf_.size() < want) rbuf_.resize(std::max(want, kInitialReadBytes));
  reading_ = true;
  socket_.async_read_some(asio::buffer(rbuf_.data() + rlen_, rbuf_.size() - rlen_),
                          [self = shared_from_this()](const error_code& ec, size_t n) { self->onRead(ec, n); });
}

void Session::onRead(const error_code& ec, size_t n) {
  reading_ = false;
  if (state_ != State::kAwaitHello && state_ != State::kStreaming) return;  // ending or closing: input is ignored
  if (ec == asio::error::eof && rlen_ > 0) {
    // The client half-closed inside a frame: tell it why the partial frame is dropped.
    std::string got = std::to_string(rlen_) + " bytes";
    if (rlen_ >= wire::kFrameHeaderBytes) {
      uint32_t n = 0;
      if (wire::parseFrameHeader(reinterpret_cast<const uint8_t*>(rbuf_.data()), limits(), &n).isOk()) {
        got = std::to_string(rlen_ - wire::kFrameHeaderBytes) + " of " + std::to_string(n) + " body bytes";
      }
    }
    reject(RejectReason::kBadFrame, Status::Code::kCorruption, "truncated frame: the connection ended after " + got);
    return;
  }
  if (ec) {
    // The client went away (EOF, reset). Batches already queued still commit; nobody is
    // left to acknowledge them, and the client re-sends them in its next session.
    if (ec != asio::error::eof && ec != asio::error::connection_reset && ec != asio::error::operation_aborted) {
      std::fprintf(stderr, "argusd: %s: read failed: %s\n", describe().c_str(), ec.message().c_str());
    }
    finish();
    return;
  }
  rlen_ += n;
  ctx_.metrics->frame_bytes.fetch_add(n, std::memory_order_relaxed);
  if (!processBuffer()) return;
  readIfAllowed();
}

void Session::armFrameDeadline(bool frame_consumed) {
  if (rlen_ == 0) {
    frame_pending_ = false;  // a stale timer finds frame_pending_ false or another epoch
    return;
  }
  if (state_ != State::kStreaming || ctx_.frame_timeout.count() <= 0) return;
  if (frame_pending_ && !frame_consumed) return;  // the same frame is still arriving
  frame_pending_ = true;
  uint64_t epoch = ++frame_epoch_;
  frame_timer_.expires_after(ctx_.frame_timeout);
  frame_timer_.async_wait([self = shared_from_this(), epoch](const error_code& ec) {
    if (ec || !self->frame_pending_ || self->frame_epoch_ != epoch || self->state_ != State::kStreaming) return;
    if (self->paused_) {
      // argusd stopped reading (backpressure): the client is not the one holding the frame up.
      self->frame_pending_ = false;
      self->armFrameDeadline(true);
      return;
    }
    self->reject(RejectReason::kTimeout, Status::Code::kAborted,
                 "frame not completed within " + std::to_string(self->ctx_.frame_timeout.count()) + " ms (" +
                     std::to_string(self->rlen_) + " bytes of it arrived)");
  });
}

bool Session::processBuffer() {
  size_t off = 0;
  while (rlen_ - off >= wire::kFrameHeaderBytes) {
    uint32_t n = 0;
    Status s = wire::parseFrameHeader(reinterpret_cast<const uint8_t*>(rbuf_.data() + off), limits(), &n);
    if (!s.isOk()) {
      bool too_large = s.message().find("exceeds the limit") != std::string::npos;
      std::string when = too_large && state_ == State::kAwaitHello ? " before Hello" : "";
      reject(too_large ? RejectReason::kFrameTooLarge : RejectReason::kBadFrame, Status::Code::kInvalidArgument,
             "bad frame: " + s.message() + when);
      return false;
    }
    if (rlen_ - off - wire::kFrameHeaderBytes < n) break;  // body not complete yet
    body_.assign(rbuf_.data() + off + wire::kFrameHeaderBytes, n);
    off += wire::kFrameHeaderBytes + n;
    handleFrame();
    if (state_ != State::kAwaitHello && state_ != State::kStreaming) return false;
  }
  if (off > 0) {
    std::memmove(rbuf_.data(), rbuf_.data() + off, rlen_ - off);
    rlen_ -= off;
  }
  armFrameDeadline(off > 0);
  if (rlen_ == 0 && rbuf_.size() > kKeepReadBytes) {
    std::vector<char>(kInitialReadBytes).swap(rbuf_);
    body_.shrink(kKeepReadBytes);
  }
  return true;
}

// --- messages -----------------------------------------------------------------------------

void Session::handleFrame() {
  wire::ClientMessage msg;
  Status s = wire::decodeClientMessage(body_, ctx_.limits, &msg);
  if (!s.isOk()) {
    if (state_ == State::kAwaitHello && s.message().find("invalid job id") != std::string::npos) {
      reject(RejectReason::kBadHello, Status::Code::kInvalidArgument, "bad Hello: " + s.message());
    } else {
      reject(RejectReason::kBadFrame, s.code(), "bad message: " + s.message());
    }
    return;
  }
  if (state_ == State::kAwaitHello) {
    if (msg.kind != wire::ClientMessage::Kind::kHello) {
      reject(RejectReason::kBadHello, Status::Code::kInvalidArgument,
             std::string("the first message must be Hello, got ") + wire::clientMessageKindName(msg.kind));
      return;
    }
    handleHello(msg.hello);
    return;
  }
  switch (msg.kind) {
    case wire::ClientMessage::Kind::kHello:
      reject(RejectReason::kBadHello, Status::Code::kInvalidArgument, "a second Hello in one session");
      return;
    case wire::ClientMessage::Kind::kDictionary:
      handleDictionary(std::move(msg.dictionary));
      return;
    case wire::ClientMessage::Kind::kSteps:
      handleSteps(msg.steps);
      return;
    case wire::ClientMessage::Kind::kGoodbye:
      beginEnding(/*draining=*/false);
      return;
  }
}

void Session::handleHello(const wire::Hello& hello) {
  job_ = hello.job;
  topology_ = hello.topology;
  if (hello.protocol_version != wire::kProtocolVersion) {
    reject(RejectReason::kProtocolVersion, Status::Code::kVersionMismatch,
           "protocol version " + std::to_string(hello.protocol_version) + " is not supported (argusd speaks version " +
               std::to_string(wire::kProtocolVersion) + ")");
    return;
  }
  if (hello.encoding < wire::kOldestStepEncodingVersion || hello.encoding > wire::kStepEncodingVersion) {
    reject(RejectReason::kProtocolVersion, Status::Code::kVersionMismatch,
           "StepRecord encoding " + std::to_string(hello.encoding) + " is not supported (argusd reads encodings " +
               std::to_string(wire::kOldestStepEncodingVersion) + " to " + std::to_string(wire::kStepEncodingVersion) + ")");
    return;
  }
  if (ctx_.auth != nullptr) {
    switch (ctx_.auth->check(hello.job, hello.auth_token)) {
      case AuthTable::Verdict::kAllowed:
        break;
      case AuthTable::Verdict::kUnknownJob:
        reject(RejectReason::kUnknownJob, Status::Code::kNotFound, "unknown job '" + hello.job + "' (not in the auth file)");
        return;
      case AuthTable::Verdict::kWrongToken:
        reject(RejectReason::kWrongToken, Status::Code::kPermissionDenied, "wrong auth token for job '" + hello.job + "'");
        return;
    }
  }
  auto job = ctx_.resolve_job(hello.job);
  if (!job.isOk()) {
    reject(RejectReason::kWriteFailed, job.status().code(), "cannot register job: " + job.status().message());
    return;
  }
  job_id_ = job.value();
  state_ = State::kStreaming;
  {
    std::lock_guard lock(identity_mu_);
    identity_set_ = true;
    identity_job_ = job_;
    identity_rank_ = topology_.rank;
  }
  timer_.cancel();
  chain_.setBlockSteps(ctx_.block_steps);
  queueFrame(wire::encodeWelcome({wire::kProtocolVersion, id_, ctx_.limits.max_frame_bytes, ctx_.block_steps}));
}

void Session::handleDictionary(wire::Dictionary&& dict) {
  if (dict.empty()) return;
  CommitItem item;
  item.bytes = dictBytes(dict) + body_.size();
  item.kernels = std::move(dict.kernels);
  item.stacks = std::move(dict.stacks);
  item.strings = std::move(dict.strings);
  submit(std::move(item));
}

void Session::handleSteps(const wire::StepBatchView& batch) {
  if (batch.first_seq != next_seq_) {
    reject(RejectReason::kSequence, Status::Code::kInvalidArgument,
           "StepBatch starts at seq " + std::to_string(batch.first_seq) + ", expected " + std::to_string(next_seq_) +
               " (sequence numbers are contiguous from 1 in each session)");
    return;
  }
  CommitItem item;
  // Reused arena and entry list (from a committed batch): appending allocates nothing.
  item.encoded = ctx_.committer->takeEncodedBuffer();
  item.encoded.session = id_;
  std::string& arena = item.encoded.arena;
  std::vector<HeadEntries::Entry>& entries = item.encoded.entries;
  // The decoded-size limit counts what the records decode to (memoryBytes), as before; the
  // byte budgets are charged what this batch holds while in flight: frame body and arena.
  size_t decoded = body_.size();
  size_t encoded = 0;
  size_t largest = 0;  // memoryBytes of the largest record
  for (size_t i = 0; i < batch.records.size(); ++i) {
    model::StepRecord& rec = scratch_;
    uint64_t seq = batch.first_seq + i;
    Status s = decoder_.decode(batch.records[i], &rec);
    if (!s.isOk()) {
      reject(RejectReason::kBadRecord, Status::Code::kCorruption, "record seq " + std::to_string(seq) + ": " + s.message());
      return;
    }
    // Stored as they arrived, records must decode a block at a time (model/step_chain.h).
    if (chain_.startsChain(rec.attempt, rec.step) && !model::isKeyframe(batch.records[i])) {
      reject(RejectReason::kBadRecord, Status::Code::kInvalidArgument,
             "record seq " + std::to_string(seq) + " (step " + std::to_string(rec.step) + ", attempt " + std::to_string(rec.attempt) +
                 ") is a delta across a block boundary: protocol 2 restarts the chain with a keyframe every " +
                 std::to_string(ctx_.block_steps) + " steps and at every new attempt");
      return;
    }
    chain_.advance(rec.attempt, rec.step);
    if (rec.rank != topology_.rank) {
      reject(RejectReason::kBadRecord, Status::Code::kInvalidArgument,
             "record seq " + std::to_string(seq) + " is for rank " + std::to_string(rec.rank) + " but the session's Hello said rank " +
                 std::to_string(topology_.rank));
      return;
    }
    if (have_last_) {
      if (rec.attempt < last_attempt_) {
        reject(RejectReason::kStepOrder, Status::Code::kInvalidArgument,
               "record seq " + std::to_string(seq) + ": attempt " + std::to_string(rec.attempt) + " after attempt " +
                   std::to_string(last_attempt_) + " (attempts never go back within a session)");
        return;
      }
      if (rec.attempt == last_attempt_ && rec.step <= last_step_) {
        std::string what = rec.step == last_step_ ? "duplicate step " : "out-of-order step ";
        reject(RejectReason::kStepOrder, Status::Code::kInvalidArgument,
               "record seq " + std::to_string(seq) + ": " + what + std::to_string(rec.step) + " after step " +
                   std::to_string(last_step_) + " (attempt " + std::to_string(rec.attempt) +
                   "; steps must strictly increase within a session)");
        return;
      }
    }
    if (rec.step > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      reject(RejectReason::kBadRecord, Status::Code::kInvalidArgument,
             "record seq " + std::to_string(seq) + ": step " + std::to_string(rec.step) +
                 " exceeds the largest step argus stores (2^63-1 = " + std::to_string(std::numeric_limits<int64_t>::max()) + ")");
      return;
    }
    have_last_ = true;
    last_attempt_ = rec.attempt;
    last_step_ = rec.step;
    size_t rec_bytes = model::memoryBytes(rec);
    largest = std::max(largest, rec_bytes);
    decoded += rec_bytes;
    if (decoded > ctx_.batch_decoded_bytes) {
      reject(RejectReason::kResourceLimit, Status::Code::kResourceExhausted,
             "StepBatch from seq " + std::to_string(batch.first_seq) + " decodes to more than " +
                 std::to_string(ctx_.batch_decoded_bytes) + " bytes (passed at record seq " + std::to_string(seq) + " of " +
                 std::to_string(batch.records.size()) + "); send smaller batches");
      return;
    }
    encoded += batch.records[i].size();
    uint64_t base = rec.step - rec.step % ctx_.block_steps;
    if (entries.empty() || entries.back().block_base != base) {
      if (!entries.empty()) entries.back().size = arena.size() - entries.back().offset;
      entries.push_back({rec.rank, base, seq, arena.size(), 0});
      storage::beginHeadEntry(&arena);
    }
    storage::appendHeadRecord(&arena, batch.records[i], rec);
    item.encoded.summaries.push_back(model::summarize(rec));
  }
  if (!entries.empty()) entries.back().size = arena.size() - entries.back().offset;
  item.encoded.records = batch.records.size();
  // One outsized record must not pin its lists' capacity for the rest of the session.
  if (largest > kKeepScratchBytes) scratch_ = model::StepRecord();
  ctx_.metrics->record_bytes.fetch_add(encoded, std::memory_order_relaxed);
  next_seq_ += batch.records.size();
  item.up_to = next_seq_ - 1;
  item.bytes = body_.size() + arena.size() + entries.size() * sizeof(HeadEntries::Entry) + item.encoded.summaries.size() * sizeof(model::StepSummary);
  submit(std::move(item));
}

void Session::submit(CommitItem&& item) {
  item.job = job_id_;
  if (topology_pending_) {
    item.topology = topology_;
    topology_pending_ = false;
  }
  item.sink = shared_from_this();
  ++inflight_items_;
  inflight_bytes_ += item.bytes;
  ctx_.committer->submit(std::move(item));
}

void Session::onCommitted(uint64_t up_to, size_t bytes, const Status& status) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), up_to, bytes, status] {
    --self->inflight_items_;
    self->inflight_bytes_ -= bytes;
    if (self->state_ == State::kClosing || self->state_ == State::kClosed) return;
    if (!status.isOk()) {
      // Whatever the store said (Corruption, InvalidArgument, NotFound...), the client's data
      // was fine as far as this session could check: tell it to retry (StepSender treats
      // IoError and Unavailable as retryable; the store's own code would make it drop data).
      bool shutting_down = status.code() == Status::Code::kUnavailable || self->draining_;
      self->reject(RejectReason::kWriteFailed, shutting_down ? Status::Code::kUnavailable : Status::Code::kIoError,
                   "write failed (" + std::string(Status::codeName(status.code())) + "): " + status.message());
      return;
    }
    if (up_to > self->ack_ready_) {
      self->ack_ready_ = up_to;
      self->doWrite();
    }
    if (self->state_ == State::kEnding) {
      self->maybeFinishEnding();
    } else if (self->paused_) {
      self->readIfAllowed();
    }
  });
}

// --- ending -------------------------------------------------------------------------------

void Session::reject(RejectReason why, Status::Code code, const std::string& reason) {
  ctx_.metrics->reject(why);
  std::fprintf(stderr, "argusd: %s refused (%s): %s\n", describe().c_str(), rejectReasonName(why), reason.c_str());
  closeWith(code, reason);
}

void Session::closeWith(Status::Code code, const std::string& reason) {
  if (state_ == State::kClosing || state_ == State::kClosed) return;
  state_ = State::kClosing;
  {
    std::lock_guard lock(identity_mu_);
    identity_set_ = false;
  }
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_receive, ec);
  // Acks of what is already durable go out before the Close.
  if (ack_ready_ > ack_sent_) {
    wq_.push_back(wire::encodeAck(ack_ready_));
    ack_sent_ = ack_ready_;
  }
  wq_.push_back(wire::encodeClose(code, reason));
  timer_.expires_after(ctx_.close_timeout);
  timer_.async_wait([self = shared_from_this()](const error_code& e) {
    if (!e) self->finish();  // the client does not read: give up on the Close
  });
  doWrite();
}

bool Session::streamingFor(std::string* job, uint32_t* rank) const {
  std::lock_guard lock(identity_mu_);
  if (!identity_set_) return false;
  *job = identity_job_;
  *rank = identity_rank_;
  return true;
}

void Session::sendControl(const wire::Control& control) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), control] {
    if (self->state_ != State::kStreaming) return;
    self->queueFrame(wire::encodeControl(control));
  });
}

void Session::beginEnding(bool draining) {
  {
    std::lock_guard lock(identity_mu_);
    identity_set_ = false;
  }
  draining_ = draining;
  state_ = State::kEnding;
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_receive, ec);
  maybeFinishEnding();
}

void Session::maybeFinishEnding() {
  if (state_ != State::kEnding || inflight_items_ > 0) return;
  if (draining_) {
    wire::Control c;
    c.kind = wire::Control::Kind::kDraining;
    c.draining_ms = ctx_.draining_ms;
    if (ack_ready_ > ack_sent_) {
      wq_.push_back(wire::encodeAck(ack_ready_));
      ack_sent_ = ack_ready_;
    }
    wq_.push_back(wire::encodeControl(c));
    closeWith(Status::Code::kOk, "server shutting down");
  } else {
    closeWith(Status::Code::kOk, "goodbye");
  }
}

// --- writing ------------------------------------------------------------------------------

void Session::queueFrame(std::string frame) {
  wq_.push_back(std::move(frame));
  doWrite();
}

void Session::doWrite() {
  if (writing_ || finished_) return;
  if (wq_.empty() && ack_ready_ > ack_sent_ && state_ != State::kClosing) {
    wq_.push_back(wire::encodeAck(ack_ready_));
    ack_sent_ = ack_ready_;
  }
  if (wq_.empty()) {
    if (state_ == State::kClosing) finish();
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(wq_.front()), [self = shared_from_this()](const error_code& ec, size_t) {
    self->writing_ = false;
    if (!self->wq_.empty()) self->wq_.pop_front();
    if (ec) {
      self->finish();
      return;
    }
    self->doWrite();
  });
}

void Session::finish() {
  if (finished_) return;
  finished_ = true;
  {
    std::lock_guard lock(identity_mu_);
    identity_set_ = false;
  }
  state_ = State::kClosed;
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  timer_.cancel();
  frame_timer_.cancel();
  head_timer_.cancel();
  ctx_.metrics->sessions_open.fetch_sub(1, std::memory_order_relaxed);
  if (ctx_.on_closed) ctx_.on_closed(id_);
}

}  // namespace argus::ingest
