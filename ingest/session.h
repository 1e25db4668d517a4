// Session: one ingest connection (docs/wire/protocol.md, "Message flow").
//
// Reads frames (length checked before the body is read), requires Hello first (protocol
// version, job id, token), decodes StepBatch records with a per-session StepDecoder,
// validates them (rank, contiguous seq, strictly increasing steps per attempt, delta chains
// that end at block boundaries), copies their bytes as they arrived into head entries (one
// per block), hands those to the Committer and acknowledges once the Committer reports
// them durable. Any bad input sends Close{code, reason} and closes this connection only.
//
// Threading: every handler runs on the socket's strand; onCommitted() (called by the
// committer thread) posts onto it.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ingest/auth.h"
#include "ingest/byte_budget.h"
#include "ingest/committer.h"
#include "ingest/ingest_metrics.h"
#include "model/step_chain.h"
#include "model/step_codec.h"
#include "storage/store.h"
#include "wire/frame.h"
#include "wire/messages.h"

namespace argus::ingest {

// What sessions share: the server's parts and settings. Outlives every session.
struct SessionContext {
  Committer* committer = nullptr;
  ByteBudget* budget = nullptr;
  IngestMetrics* metrics = nullptr;
  const AuthTable* auth = nullptr;  // null: open mode
  wire::FrameLimits limits;
  size_t session_inflight_bytes = 16u << 20;  // stop reading above this
  // Largest frame before Hello (a Hello is small): an unauthenticated connection cannot make
  // argusd allocate more than this.
  uint32_t prehello_max_frame_bytes = 64u << 10;
  // A StepBatch whose decoded records (list entries and histogram buckets, as charged to the
  // byte budgets) exceed this closes the session with ResourceExhausted.
  size_t batch_decoded_bytes = 64u << 20;
  std::chrono::milliseconds hello_timeout{10000};
  // After Hello, a frame whose first bytes arrived must complete within this (0: no limit).
  std::chrono::milliseconds frame_timeout{30000};
  std::chrono::milliseconds close_timeout{5000};
  uint32_t draining_ms = 1000;  // told to clients in Control.draining
  uint32_t block_steps = 256;   // the store's; told to clients in Welcome (delta chains end at blocks)
  // True while unsealed head data is over its limit: sessions stop reading and look again
  // every head_full_retry.
  std::function<bool()> head_full;
  std::chrono::milliseconds head_full_retry{20};
  std::function<Result<storage::JobId>(const std::string&)> resolve_job;
  std::function<void(uint64_t session_id)> on_closed;
};

class Session : public CommitSink, public std::enable_shared_from_this<Session> {
 public:
  // `id`: from Store::newSessionId(); it names the session's head entries.
  Session(boost::asio::ip::tcp::socket socket, uint64_t id, const SessionContext& ctx);
  ~Session() override;

  void start();
  // Server shutdown: stop reading, wait for this session's queued batches to commit, send
  // the final Ack, Control{draining}, Close{kOk, "server shutting down"}, close.
  void drain();
  void onCommitted(uint64_t up_to, size_t bytes, const Status& status) override;
  uint64_t id() const { return id_; }

  // The job and rank the session streams for, once Hello was accepted (any thread).
  // Returns false before that and after the session started ending.
  bool streamingFor(std::string* job, uint32_t* rank) const;
  // Sends `control` to the client on the session's strand, if it is still streaming then
  // (any thread; never blocks).
  void sendControl(const wire::Control& control);

 private:
  enum class State : uint8_t { kAwaitHello, kStreaming, kEnding, kClosing, kClosed };

  // The frame limits in force: the small pre-Hello limit until Hello is accepted.
  const wire::FrameLimits& limits() const { return state_ == State::kAwaitHello ? prehello_limits_ : ctx_.limits; }
  // Arms the frame deadline when a new frame has started (after Hello).
  void armFrameDeadline(bool frame_consumed);
  void readIfAllowed();
  void onRead(const boost::system::error_code& ec, size_t n);
  // Parses whole frames out of rbuf_; returns false when the session is closing.
  bool processBuffer();
  void handleFrame();
  void handleHello(const wire::Hello& hello);
  void handleDictionary(wire::Dictionary&& dict);
  void handleSteps(const wire::StepBatchView& batch);
  void submit(CommitItem&& item);
  // Refuses the session: counts it, logs it, sends Close{code, reason}, closes.
  void reject(RejectReason why, Status::Code code, const std::string& reason);
  void closeWith(Status::Code code, const std::string& reason);
  void beginEnding(bool draining);
  void maybeFinishEnding();
  void queueFrame(std::string frame);
  void doWrite();
  void finish();
  std::string describe() const;

  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer timer_;
  boost::asio::steady_timer frame_timer_;
  boost::asio::steady_timer head_timer_;  // re-checks a full head
  const uint64_t id_;
  const SessionContext& ctx_;
  wire::FrameLimits prehello_limits_;
  std::string peer_;

  State state_ = State::kAwaitHello;
  bool draining_ = false;  // ending because the server shuts down (else Goodbye)
  bool reading_ = false;
  bool paused_ = false;
  bool finished_ = false;

  // Reading.
  std::vector<char> rbuf_;
  size_t rlen_ = 0;
  wire::FrameBody body_;
  bool frame_pending_ = false;  // a partial frame is in rbuf_ and its deadline is armed
  uint64_t frame_epoch_ = 0;    // bumped per armed deadline; a stale timer sees another value

  // Session facts from Hello.
  std::string job_;
  storage::JobId job_id_ = 0;
  model::RankTopology topology_;
  bool topology_pending_ = true;  // stored with the first commit
  model::StepDecoder decoder_;
  // Every StepBatch record decodes into this one record (its lists and histograms keep their
  // capacity: no allocation in steady state); only its bytes as they arrived are stored.
  model::StepRecord scratch_;
  model::ChainPosition chain_;  // where the client's delta chain must restart
  uint64_t next_seq_ = 1;
  bool have_last_ = false;
  uint16_t last_attempt_ = 0;
  uint64_t last_step_ = 0;

  // Commits in flight.
  size_t inflight_items_ = 0;
  size_t inflight_bytes_ = 0;

  // What streamingFor() reads from other threads: set on the strand when Hello is accepted,
  // cleared when the session ends.
  mutable std::mutex identity_mu_;
  bool identity_set_ = false;  // GUARDED_BY(identity_mu_)
  std::string identity_job_;   // GUARDED_BY(identity_mu_)
  uint32_t identity_rank_ = 0; // GUARDED_BY(identity_mu_)

  // Writing.
  std::deque<std::string> wq_;
  bool writing_ = false;
  uint64_t ack_ready_ = 0;  // highest seq durable
  uint64_t ack_sent_ = 0;   // highest seq queued in an Ack frame
};

}  // namespace argus::ingest
