// Server (see server.h).
#include "ingest/server.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "wire/messages.h"

namespace argus::ingest {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

Server::Server(storage::Store& store, IngestMetrics& metrics, ServerOptions options)
    : store_(store),
      metrics_(metrics),
      options_(std::move(options)),
      budget_(options_.global_inflight_bytes),
      committer_(store, metrics, budget_, options_.committer),
      acceptor_(io_),
      accept_retry_(io_) {
  ctx_.committer = &committer_;
  ctx_.budget = &budget_;
  ctx_.metrics = &metrics_;
  ctx_.auth = options_.auth ? &*options_.auth : nullptr;
  ctx_.limits = options_.limits;
  ctx_.session_inflight_bytes = options_.session_inflight_bytes;
  ctx_.hello_timeout = options_.hello_timeout;
  ctx_.frame_timeout = options_.frame_timeout;
  ctx_.prehello_max_frame_bytes = options_.prehello_max_frame_bytes;
  ctx_.batch_decoded_bytes = options_.batch_decoded_bytes;
  ctx_.draining_ms = options_.draining_ms;
  ctx_.block_steps = store.blockSteps();
  ctx_.head_full = [this] { return headFull(); };
  ctx_.resolve_job = [this](const std::string& job) { return resolveJob(job); };
  ctx_.on_closed = [this](uint64_t id) { onClosed(id); };
}

Server::~Server() { shutdown(); }

Status Server::start() {
  error_code ec;
  auto address = asio::ip::make_address(options_.host, ec);
  if (ec) return Status::invalidArgument("bad ingest address '" + options_.host + "': " + ec.message());
  tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::unavailable("cannot listen on " + options_.host + ":" + std::to_string(options_.port) + ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  committer_.start();
  work_.emplace(io_.get_executor());
  doAccept();
  for (int i = 0; i < std::max(1, options_.io_threads); ++i) threads_.emplace_back([this] { io_.run(); });
  if (options_.seal_interval.count() > 0) sealer_ = std::thread([this] { runSealer(); });
  started_ = true;
  return Status::ok();
}

void Server::doAccept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](const error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of descriptors or similar: back off briefly instead of spinning.
      std::fprintf(stderr, "argusd: accept failed: %s\n", ec.message().c_str());
      accept_retry_.expires_after(std::chrono::milliseconds(50));
      accept_retry_.async_wait([this](const error_code& e) {
        if (!e) doAccept();
      });
      return;
    }
    std::shared_ptr<Session> session;
    {
      std::unique_lock lock(mu_);
      if (stopping_) return;  // socket closes as it goes out of scope
      if (sessions_.size() >= options_.max_sessions) {
        lock.unlock();
        refuse(std::move(socket));
        doAccept();
        return;
      }
      uint64_t id = store_.newSessionId();  // also names the session's head entries
      session = std::make_shared<Session>(std::move(socket), id, ctx_);
      sessions_.emplace(id, session);
    }
    session->start();
    doAccept();
  });
}

void Server::refuse(tcp::socket socket) {
  metrics_.reject(RejectReason::kResourceLimit);
  struct Refused {
    tcp::socket socket;
    std::string frame;
  };
  auto r = std::make_shared<Refused>(Refused{std::move(socket), {}});
  r->frame = wire::encodeClose(Status::Code::kResourceExhausted,
                               "too many sessions (argusd serves at most " + std::to_string(options_.max_sessions) +
                                   " at once; --max-sessions)");
  // A few dozen bytes into a fresh socket's send buffer: completes at once. No read, no
  // timer: nothing of this connection stays in argusd once the write is done.
  asio::async_write(r->socket, asio::buffer(r->frame), [r](const error_code&, size_t) {
    error_code e;
    r->socket.shutdown(tcp::socket::shutdown_send, e);
    r->socket.close(e);
  });
}

size_t Server::requestFlightRecorderDump(const std::string& job, const std::vector<uint32_t>& ranks, uint64_t from_step,
                                         uint64_t to_step) {
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return 0;
    for (auto& [id, weak] : sessions_) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  wire::Control c;
  c.kind = wire::Control::Kind::kDumpFlightRecorder;
  c.from_step = from_step;
  c.to_step = to_step;
  size_t asked = 0;
  std::string session_job;
  uint32_t rank = 0;
  for (const auto& s : live) {
    if (!s->streamingFor(&session_job, &rank) || session_job != job) continue;
    if (!ranks.empty() && std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) continue;
    s->sendControl(c);
    ++asked;
  }
  return asked;
}

void Server::onClosed(uint64_t id) {
  std::lock_guard lock(mu_);
  sessions_.erase(id);
  if (sessions_.empty()) closed_cv_.notify_all();
}

Result<storage::JobId> Server::resolveJob(const std::string& job) {
  std::lock_guard lock(jobs_mu_);
  if (auto it = jobs_.find(job); it != jobs_.end()) return it->second;
  if (!store_.findJob(job).isOk() && store_.listJobs().size() >= options_.max_jobs) {
    return Status::resourceExhausted("too many jobs (argusd keeps at most " + std::to_string(options_.max_jobs) +
                                     "; --max-jobs, or drop some with `argus jobs --drop`)");
  }
  auto id = store_.ensureJob(job);
  if (!id.isOk()) return id.status();
  jobs_.emplace(job, id.value());
  return id.value();
}

bool Server::headOverLimit() const {
  // Without a sealer nothing would make room: no limit then.
  return options_.max_head_bytes != 0 && options_.seal_interval.count() > 0 && store_.headBytes() > options_.max_head_bytes;
}

bool Server::headFull() {
  if (!headOverLimit()) return false;
  // Stuck: what is over the limit sat in open blocks, which only more records complete. Read
  // on until head has grown by an eighth of the limit since, then let the sealer look again.
  uint64_t stuck_at = head_stuck_at_.load(std::memory_order_relaxed);
  if (stuck_at != 0 && store_.headBytes() < stuck_at + options_.max_head_bytes / 8) return false;
  {
    std::lock_guard lock(sealer_mu_);
    seal_now_ = true;
  }
  sealer_cv_.notify_one();
  return true;
}

void Server::runSealer() {
  if (options_.seal_nice > 0) {
    // Linux: both apply to this thread only. Best effort: a failure just leaves the default.
    sched_param sp{};
    sp.sched_priority = 0;
    (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), options_.seal_nice);
  }
  std::unique_lock lock(sealer_mu_);
  auto next_retention = std::chrono::steady_clock::now();
  for (;;) {
    sealer_cv_.wait_for(lock, options_.seal_interval, [&] { return sealer_stop_ || seal_now_; });
    if (sealer_stop_) break;
    seal_now_ = false;
    lock.unlock();
    // Over the head limit (sessions are waiting), seal complete blocks until head is under it
    // or a pass frees nothing. Open blocks are never sealed early: a live session's delta
    // chain continues in them. If what is left is all open blocks, ingest goes on (only more
    // records complete them) until a later pass makes progress again.
    Status s;
    bool over = headOverLimit();
    if (over) metrics_.forced_seals.fetch_add(1, std::memory_order_relaxed);
    for (;;) {
      uint64_t before = store_.headBytes();
      s = store_.sealReady();
      if (!s.isOk() || !headOverLimit() || store_.headBytes() >= before) break;
    }
    head_stuck_at_.store(headOverLimit() ? store_.headBytes() : 0, std::memory_order_relaxed);
    if (s.isOk()) {
      metrics_.seals.fetch_add(1, std::memory_order_relaxed);
    } else {
      metrics_.seal_failures.fetch_add(1, std::memory_order_relaxed);
      std::fprintf(stderr, "argusd: periodic seal failed: %s\n", s.toString().c_str());
    }
    if (std::chrono::steady_clock::now() >= next_retention) {
      next_retention = std::chrono::steady_clock::now() + options_.retention_interval;
      applyRetention();
    }
    lock.lock();
  }
}

void Server::applyRetention() {
  int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  size_t before = store_.listJobs().size();
  Status s = store_.applyRetention(now_ns);
  if (!s.isOk()) {
    std::fprintf(stderr, "argusd: retention failed: %s\n", s.toString().c_str());
    return;
  }
  if (store_.listJobs().size() == before) return;
  // A dropped job's id is never reused: forget cached ids so a job that comes back after
  // expiring is registered anew.
  std::lock_guard jobs_lock(jobs_mu_);
  jobs_.clear();
  std::fprintf(stderr, "argusd: retention dropped %zu job(s)\n", before - store_.listJobs().size());
}

void Server::shutdown() {
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard lock(mu_);
    if (stopped_ || !started_) {
      stopped_ = true;
      return;
    }
    stopping_ = true;
    for (auto& [id, weak] : sessions_) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  asio::post(io_, [this] {
    error_code ec;
    acceptor_.close(ec);
    accept_retry_.cancel();
  });
  for (auto& s : live) s->drain();
  live.clear();
  {
    std::unique_lock lock(mu_);
    if (!closed_cv_.wait_for(lock, options_.drain_timeout, [&] { return sessions_.empty(); })) {
      std::fprintf(stderr, "argusd: %zu sessions still open after the drain timeout; closing them\n", sessions_.size());
    }
  }
  committer_.stop();
  {
    std::lock_guard lock(sealer_mu_);
    sealer_stop_ = true;
  }
  sealer_cv_.notify_all();
  if (sealer_.joinable()) sealer_.join();
  work_.reset();
  io_.stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
  std::lock_guard lock(mu_);
  stopped_ = true;
}

}  // namespace argus::ingest
