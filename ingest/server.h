// Server: argusd's ingest front end (docs/cli/argusd.md, docs/wire/protocol.md).
//
// Owns the io_context and its thread pool, the TCP acceptor, the sessions, the Committer
// (one thread doing group commits) and the periodic sealer (its own thread, so sealing
// never runs on an io thread). The Store and the metrics belong to the caller and must
// outlive the Server.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "ingest/auth.h"
#include "ingest/byte_budget.h"
#include "ingest/committer.h"
#include "ingest/ingest_metrics.h"
#include "ingest/session.h"
#include "storage/store.h"
#include "wire/frame.h"

namespace argus::ingest {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: pick a free port (see Server::port())
  int io_threads = 2;
  wire::FrameLimits limits;
  std::optional<AuthTable> auth;  // none: open mode
  size_t session_inflight_bytes = 16u << 20;  // per session, received but uncommitted
  size_t global_inflight_bytes = 256u << 20;  // all sessions together
  std::chrono::milliseconds seal_interval{2000};  // 0: no periodic sealing (nor retention)
  // How often the sealer thread drops jobs past their retention (Store::applyRetention).
  std::chrono::milliseconds retention_interval{60000};
  // Niceness of the sealer thread (SCHED_BATCH, this nice value): sealing yields the CPU to
  // the ack path (io and committer threads) in bursts and uses what is left; 0: no change.
  int seal_nice = 10;
  // Head backpressure: above this many bytes of unsealed head entries sessions stop reading
  // (their clients buffer, then block or drop as they are configured) while the sealer seals
  // complete blocks to get below it. What sits in open blocks cannot be sealed early (a live
  // session's delta chain continues there), so when only that is left sessions read on: the
  // limit bounds the backlog of complete blocks, not the open blocks of live ranks. 0 (or no
  // periodic sealing): no limit.
  uint64_t max_head_bytes = uint64_t{1} << 30;
  std::chrono::milliseconds hello_timeout{10000};
  // After Hello, a frame that started must complete within this (0: no limit).
  std::chrono::milliseconds frame_timeout{30000};
  // Largest frame accepted before Hello.
  uint32_t prehello_max_frame_bytes = 64u << 10;
  // A StepBatch decoding to more than this closes its session (ResourceExhausted).
  size_t batch_decoded_bytes = 64u << 20;
  // Open sessions at most; a connection over it gets Close{ResourceExhausted, "too many
  // sessions ..."} and is closed.
  size_t max_sessions = 20000;
  // Jobs the store may hold; a Hello for a new job over it is refused (ResourceExhausted,
  // "too many jobs"). Bounds what an open-mode (no --auth) argusd lets clients create.
  size_t max_jobs = 10000;
  std::chrono::milliseconds drain_timeout{10000};
  uint32_t draining_ms = 1000;  // clients reconnect after this long
  CommitterOptions committer;
};

class Server {
 public:
  Server(storage::Store& store, IngestMetrics& metrics, ServerOptions options);
  ~Server();  // shutdown()

  // Binds, listens, and starts the io threads, the committer and the sealer.
  Status start();
  uint16_t port() const { return port_; }
  const std::string& host() const { return options_.host; }
  // For other servers sharing the io threads (HTTP).
  boost::asio::io_context& ioContext() { return io_; }

  // Asks each live session of `job` whose rank is in `ranks` (empty: every rank) to dump its
  // flight recorder for steps [from_step, to_step] (Control{dumpFlightRecorder},
  // docs/wire/protocol.md). Any thread; never blocks on a session (the Control is queued on
  // its strand). Returns how many sessions were asked (0: none of that job is connected).
  size_t requestFlightRecorderDump(const std::string& job, const std::vector<uint32_t>& ranks, uint64_t from_step, uint64_t to_step);

  // Graceful stop: stop accepting; every session stops reading, its queued batches commit,
  // it gets its final Ack, Control{draining} and Close{kOk, "server shutting down"}; then
  // the committer, the sealer and the io threads stop. Blocks; idempotent. Does not seal
  // or close the store (the caller does).
  void shutdown();

 private:
  void doAccept();
  // Over max_sessions: sends Close{ResourceExhausted} on the socket and closes it.
  void refuse(boost::asio::ip::tcp::socket socket);
  void onClosed(uint64_t id);
  Result<storage::JobId> resolveJob(const std::string& job);
  // Drops jobs past their retention and forgets their cached ids (sealer thread).
  void applyRetention();
  void runSealer();
  bool headOverLimit() const;
  // True while head is over max_head_bytes and the sealer can make room; then also wakes
  // the sealer (any thread).
  bool headFull();

  storage::Store& store_;
  IngestMetrics& metrics_;
  ServerOptions options_;
  ByteBudget budget_;
  Committer committer_;
  SessionContext ctx_;

  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  bool started_ = false;

  std::mutex mu_;
  std::condition_variable closed_cv_;
  std::unordered_map<uint64_t, std::weak_ptr<Session>> sessions_;  // GUARDED_BY(mu_)
  bool stopping_ = false;                                           // GUARDED_BY(mu_)
  bool stopped_ = false;                                            // GUARDED_BY(mu_)

  std::mutex jobs_mu_;
  std::unordered_map<std::string, storage::JobId> jobs_;  // GUARDED_BY(jobs_mu_)

  std::mutex sealer_mu_;
  std::condition_variable sealer_cv_;
  bool sealer_stop_ = false;  // GUARDED_BY(sealer_mu_)
  bool seal_now_ = false;     // GUARDED_BY(sealer_mu_): head is full
  // Set by the sealer: head's size when a pass left it over the limit with nothing complete
  // to seal; 0 otherwise.
  std::atomic<uint64_t> head_stuck_at_{0};
  std::thread sealer_;
};

}  // namespace argus::ingest
