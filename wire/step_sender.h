// StepSender: the client side of the ingest protocol (docs/wire/protocol.md), used by
// capture, import and simulate.
//
// send() copies a StepRecord into a bounded buffer and returns; an I/O thread owned by the
// sender connects, says Hello, sends dictionary entries (each once per session, before
// the records that follow them), encodes records with model::StepEncoder in delta mode,
// batches them into StepBatch frames numbered from 1 per session, and reads Acks. A record
// leaves the buffer only when acknowledged, i.e. durable on the server. When the
// connection drops the sender reconnects with exponential backoff, starts a new session
// (fresh encoder, keyframe first, seq from 1) and re-sends the dictionaries and every
// unacknowledged record; the server stores (job, rank, step, attempt) idempotently, so a
// record sent twice is stored once.
//
// With a spool directory (options.spool_dir), records that find the buffer full go to a
// local spool file instead of being refused (wire/step_spool.h, docs/wire/spool.md), and
// so do all later ones until the spool is empty again: the spool always holds the newest
// records, and a session sends the buffer's records first, then the spool's, oldest first.
// A record leaves the spool only when acknowledged. At start the sender takes over a spool
// file an earlier process of the same job and rank left behind; at close() records still
// unacknowledged in memory go to the spool, for the next run. argusd refuses a step that
// is not after the previous one in a session, so before sending such a record (an earlier
// run's, or one of the caller's out of order) the sender ends the session once everything
// sent is acknowledged, and sends it in a new one.
//
// A Close from the server that no retry can fix (wrong token, unknown job, protocol
// version, a record the server refuses) makes the sender fail permanently: send() and
// flush() return that status, with the server's reason.
//
// Thread-safety: all public methods may be called from any thread. send() never blocks
// longer than options.send_timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "model/step_chain.h"
#include "model/step_record.h"
#include "wire/frame.h"
#include "wire/messages.h"
#include "wire/step_spool.h"

namespace argus::wire {

struct StepSenderOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string job;
  std::string auth_token;
  model::RankTopology topology;  // topology.rank is the rank of every record sent
  std::string client = "argus-wire/0.1";
  model::StepCodecOptions codec;  // delta on by default

  // Bounds on records held until acknowledged (sent or not).
  size_t max_buffered_records = 1 << 16;
  size_t max_buffered_bytes = 64u << 20;
  // How long send() waits for room when the buffer is full before ResourceExhausted.
  std::chrono::milliseconds send_timeout{0};

  // A StepBatch frame holds at most this many records / encoded bytes.
  size_t max_batch_records = 1024;
  size_t max_batch_bytes = 1u << 20;
  // How long a partial batch may wait for more records before it is sent (unless a
  // flush() or close() is waiting). Fewer, larger frames: less CPU on both sides.
  std::chrono::microseconds batch_linger{2000};

  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds handshake_timeout{5000};
  std::chrono::milliseconds backoff_initial{20};
  std::chrono::milliseconds backoff_max{1000};
  uint32_t max_server_frame_bytes = 1u << 20;  // server messages are small

  // Local spool (see above). Empty: none, a full buffer refuses records. The file never
  // grows beyond spool_max_bytes; beyond it records are refused (ResourceExhausted).
  std::string spool_dir;
  uint64_t spool_max_bytes = uint64_t{1} << 30;
  // Take over a spool file left by an earlier process of this job and rank.
  bool spool_adopt = true;
  // Where the sender tells a person about its spool (one line per event); may be empty.
  std::function<void(std::string_view)> log;
  // Called with (from_step, to_step), inclusive, for each Control{dumpFlightRecorder} argusd
  // sends (docs/wire/protocol.md); may be empty (the request is then ignored). Runs on the
  // I/O thread: it must return at once (capture only sets an atomic its collector reads).
  std::function<void(uint64_t from_step, uint64_t to_step)> on_dump_request;
};

struct StepSenderStats {
  uint64_t records_submitted = 0;  // accepted by send(), and records adopted from a spool
  uint64_t records_acked = 0;      // acknowledged (durable); a prefix of those submitted
  uint64_t records_sent = 0;       // record transmissions, re-sends included
  uint64_t records_resent = 0;     // transmissions after a reconnect
  uint64_t frames_sent = 0;
  uint64_t bytes_sent = 0;         // frame bytes written, headers included
  uint64_t record_bytes_sent = 0;  // encoded StepRecord bytes (the wire cost of a step)
  uint64_t sessions = 0;           // Welcomes received
  uint64_t connect_failures = 0;
  uint64_t session_cuts = 0;       // sessions ended so that an older step could follow
  size_t buffered_records = 0;     // unacknowledged in memory, now
  size_t buffered_bytes = 0;       // their memory estimate, now (at most max_buffered_bytes)
  size_t peak_buffered_records = 0;  // the most buffered_records has been
  size_t peak_buffered_bytes = 0;    // the most buffered_bytes has been
  // Spool (zero without one).
  uint64_t spooled_records = 0;    // written to the spool by send() or close()
  uint64_t spool_adopted = 0;      // taken over from an earlier process's spool file
  uint64_t spool_replayed = 0;     // spool records argusd acknowledged
  uint64_t spool_dropped = 0;      // refused with the spool full or off (counted, not sent)
  uint64_t spool_lost = 0;         // spooled but unreadable when replayed (damaged file)
  uint64_t spool_records = 0;      // in the spool, unacknowledged, now
  uint64_t spool_bytes = 0;        // the spool file's size now
  std::string spool_path;          // the spool file now (empty: none)
  bool connected = false;
};

class StepSender {
 public:
  // Starts the I/O thread, which connects in the background.
  explicit StepSender(StepSenderOptions options);
  // Stops at once: unacknowledged records are dropped (call close() to wait for them).
  ~StepSender();
  StepSender(const StepSender&) = delete;
  StepSender& operator=(const StepSender&) = delete;

  // Registers dictionary entries. Each distinct id is sent once per session, before any
  // record passed to send() after this call. Entries already known are ignored.
  void addKernels(std::span<const model::KernelDictEntry> entries);
  void addStacks(std::span<const model::StackDictEntry> entries);
  void addStrings(std::span<const model::StringDictEntry> entries);

  // Buffers one record for sending.
  // REQUIRES: record.rank == options.topology.rank and record is canonical.
  // Returns ResourceExhausted when the buffer stays full for options.send_timeout,
  // InvalidArgument for a record of another rank, or the permanent failure status.
  Status send(const model::StepRecord& record);
  Status send(model::StepRecord&& record);

  // Waits until every record passed to send() so far is acknowledged.
  // Returns Aborted("... unacknowledged") on timeout, or the permanent failure status.
  Status flush(std::chrono::milliseconds timeout);

  // flush(timeout), then Goodbye, then stops the I/O thread; with a spool, records still
  // unacknowledged in memory are then written to it (for the next run). Returns flush's status.
  Status close(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // OK, or the permanent failure (a non-retryable Close from the server).
  Status status() const;
  StepSenderStats stats() const;
  uint64_t ackedRecords() const { return acked_total_.load(std::memory_order_acquire); }

 private:
  struct Pending {
    model::StepRecord record;
    size_t bytes = 0;  // memory estimate
    std::chrono::steady_clock::time_point enqueued;
  };

  Status enqueue(model::StepRecord&& record);
  Status spoolRecord(const model::StepRecord& record);  // the spool path of enqueue()
  Dictionary unspooledDictLocked();  // dictionary entries not yet in the spool file; advances
  bool allAckedLocked() const;       // nothing unacknowledged, in memory or in the spool
  void releaseSpoolLocked();         // I/O thread: an empty spool's file goes, records go to memory again
  void adoptSpool();                 // I/O thread, at start
  void spillAtClose();               // after the I/O thread stopped
  // I/O thread: false when a record at (attempt, step) cannot follow the last one sent in
  // this session (argusd would refuse it).
  bool followsLastSent(const model::StepRecord& r) const {
    return !have_last_sent_ || r.attempt > last_sent_attempt_ || (r.attempt == last_sent_attempt_ && r.step > last_sent_step_);
  }
  void wake();
  void run();
  // One connection's life: returns when it ends (error, Close, stop).
  void runSession(int fd);
  Status handshake(int fd);
  // Appends frames for pending dictionary entries and unsent records to out_. Returns how
  // long to wait before a lingering partial batch is due (zero when nothing lingers).
  std::chrono::microseconds buildOutput();
  Status handleServerFrame(const FrameBody& body);
  bool sleepFor(std::chrono::milliseconds d);  // false when stopping

  const StepSenderOptions options_;
  FrameLimits server_limits_;

  mutable std::mutex mu_;
  std::condition_variable space_cv_;  // send() waits for room
  std::condition_variable acked_cv_;  // flush() waits for acks
  std::condition_variable stop_cv_;   // backoff sleeps
  std::deque<Pending> queue_;         // GUARDED_BY(mu_): unacknowledged, in send order
  size_t queued_bytes_ = 0;           // GUARDED_BY(mu_)
  size_t sent_in_session_ = 0;        // GUARDED_BY(mu_): queue_ prefix sent this session
  uint64_t session_acked_ = 0;        // GUARDED_BY(mu_): seq of queue_.front() is this + 1
  std::vector<model::KernelDictEntry> kernels_;  // GUARDED_BY(mu_), all known
  std::vector<model::StackDictEntry> stacks_;
  std::vector<model::StringDictEntry> strings_;
  std::unordered_set<uint64_t> kernel_ids_, stack_ids_, string_ids_;
  size_t kernels_sent_ = 0, stacks_sent_ = 0, strings_sent_ = 0;  // this session
  Status failure_;                    // GUARDED_BY(mu_): permanent
  bool stopping_ = false;             // GUARDED_BY(mu_)
  bool goodbye_ = false;              // GUARDED_BY(mu_): close() asked for Goodbye
  int flush_waiters_ = 0;             // GUARDED_BY(mu_): no lingering while > 0
  StepSenderStats stats_;             // GUARDED_BY(mu_)
  std::chrono::milliseconds reconnect_after_{0};  // from Control.draining, I/O thread only
  size_t resend_until_ = 0;

  std::unique_ptr<StepSpool> spool_;  // null without a spool
  bool spool_in_use_ = false;         // GUARDED_BY(mu_): new records go to the spool
  int spool_appends_ = 0;             // GUARDED_BY(mu_): send()s writing to the spool now
  bool adopting_ = false;             // GUARDED_BY(mu_): the I/O thread looks for an earlier run's spool
  size_t spool_kernels_ = 0, spool_stacks_ = 0, spool_strings_ = 0;  // GUARDED_BY(mu_): in the spool file

  std::atomic<uint64_t> acked_total_{0};
  std::atomic<bool> wake_pending_{false};
  int wake_fd_ = -1;  // eventfd: send()/close() wake the I/O thread

  // I/O thread state.
  model::ChainedStepEncoder encoder_;  // chains cut at the server's block_steps (Welcome)
  std::string out_;       // bytes to write
  size_t out_off_ = 0;
  std::string in_;        // bytes read, not yet a whole frame
  FrameBody frame_;
  uint32_t max_frame_bytes_ = kDefaultMaxFrameBytes;  // the server's, from Welcome
  size_t batch_cap_;  // records per StepBatch; halved when argusd says a batch decodes too large
  bool have_last_sent_ = false;  // this session's last record sent: (attempt, step)
  uint16_t last_sent_attempt_ = 0;
  uint64_t last_sent_step_ = 0;
  bool cut_pending_ = false;     // the next record cannot follow: end the session once all is acked
  model::StepRecord spool_rec_;  // a record read back from the spool
  std::thread thread_;
};

}  // namespace argus::wire
