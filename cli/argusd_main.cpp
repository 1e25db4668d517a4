// argusd: the Argus server. Ingest (docs/wire/protocol.md) and HTTP (docs/http/api.md) on
// one store. Usage and every option: docs/cli/argusd.md, or `argusd --help`.
//
// Startup prints, on stdout and flushed, the lines tests and scripts parse:
//   argusd: ingest listening on HOST:PORT
//   argusd: http listening on HOST:PORT        (with --http)
// SIGTERM or SIGINT: stop accepting, drain (queued data commits, clients get their final
// Acks and Close{OK, "server shutting down"}), seal, close the store, exit 0.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/allocator.h"
#include "ingest/auth.h"
#include "diagnose/monitor.h"
#include "ingest/ingest_metrics.h"
#include "ingest/server.h"
#include "query/http/http_router.h"
#include "query/http/http_server.h"
#include "query/http/http_tokens.h"
#include "storage/store.h"
#include "wire/tcp.h"

namespace {

using namespace argus;

int fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "argusd: %s\n", message.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"argusd: the Argus server. Accepts StepRecords from capture/import/simulate over the ingest\n"
               "protocol, stores them durably (acknowledged = in the WAL), and serves queries over HTTP.\n"
               "Stop with SIGTERM or SIGINT: queued data is committed and acknowledged first."};
  std::string data_dir;
  std::string ingest_addr = "127.0.0.1:7701";
  std::string http_addr;
  std::string auth_file;
  std::string http_tokens_file;
  std::string sync_wal = "on";
  std::string seal_on_exit = "all";
  uint32_t block_steps = 256;
  uint32_t max_frame_bytes = argus::wire::kDefaultMaxFrameBytes;
  int io_threads = 2;
  size_t session_buffer_bytes = 16u << 20;
  size_t ingest_buffer_bytes = 256u << 20;
  int64_t seal_interval_ms = 2000;
  int64_t retention_interval_s = 60;
  int seal_nice = 10;
  uint64_t max_head_bytes = uint64_t{1} << 30;
  int commit_threads = 2;
  int64_t hello_timeout_ms = 10000;
  int64_t drain_timeout_ms = 10000;
  int64_t diagnose_interval_ms = 1000;
  int64_t frame_timeout_ms = 30000;
  size_t max_sessions = 20000;
  size_t max_jobs = 10000;
  size_t max_batch_decoded_bytes = 64u << 20;

  app.add_option("--data", data_dir, "Data directory of the store (created if missing)")->required();
  app.add_option("--ingest", ingest_addr, "HOST:PORT for the ingest protocol; port 0 picks a free port")
      ->capture_default_str();
  app.add_option("--http", http_addr, "HOST:PORT for the HTTP API (/api/v1, /metrics, /healthz); off when not given");
  app.add_option("--auth", auth_file,
                 "Auth file, lines `JOB TOKEN` (`*` as JOB: any other job). With it, unknown jobs and wrong tokens "
                 "are refused; without it every job is accepted")
      ->check(CLI::ExistingFile);
  app.add_option("--http-tokens", http_tokens_file,
                 "HTTP tokens file, lines `ROLE TOKEN` (ROLE read or control). With it, /api/ requests need "
                 "`Authorization: Bearer TOKEN`; /healthz and /metrics stay open")
      ->check(CLI::ExistingFile);
  app.add_option("--sync-wal", sync_wal,
                 "on: fsync the WAL in every group commit before acknowledging (survives power loss); off: an "
                 "acknowledged record survives a process crash only")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--block-steps", block_steps, "Steps per sealed column chunk (a power of two)")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  app.add_option("--max-frame-bytes", max_frame_bytes,
                 "Largest ingest frame accepted; a larger length prefix closes the session before its body is read")
      ->check(CLI::Range(4096u, 1u << 30))
      ->capture_default_str();
  app.add_option("--io-threads", io_threads, "Threads serving network I/O (ingest and HTTP)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--session-buffer-bytes", session_buffer_bytes,
                 "Per session: bytes received but not yet committed above which the session stops reading")
      ->capture_default_str();
  app.add_option("--ingest-buffer-bytes", ingest_buffer_bytes,
                 "All sessions together: bytes received but not yet committed above which sessions stop reading")
      ->capture_default_str();
  app.add_option("--seal-interval-ms", seal_interval_ms, "How often complete blocks of head entries are sealed into chunks; 0: never")
      ->capture_default_str();
  app.add_option("--retention-interval-s", retention_interval_s,
                 "How often jobs past their retention (set with `argus jobs --retention`) are dropped; needs sealing on")
      ->check(CLI::Range(int64_t{1}, int64_t{86400}))
      ->capture_default_str();
  app.add_option("--max-head-bytes", max_head_bytes,
                 "Unsealed head data above which sessions stop reading while the sealer seals complete blocks "
                 "(open blocks of live ranks are not held to it); 0: no limit")
      ->capture_default_str();
  app.add_option("--seal-nice", seal_nice,
                 "Nice value of the sealer thread (SCHED_BATCH): sealing takes the CPU the ack path leaves; 0: as the "
                 "other threads")
      ->check(CLI::Range(0, 19))
      ->capture_default_str();
  app.add_option("--commit-threads", commit_threads,
                 "Threads writing group commits concurrently (RocksDB merges them into one WAL write and sync)")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  app.add_option("--seal-on-exit", seal_on_exit, "On shutdown seal all head entries, only complete blocks, or none")
      ->check(CLI::IsMember({"all", "ready", "none"}))
      ->capture_default_str();
  app.add_option("--hello-timeout-ms", hello_timeout_ms, "A connection that sends no Hello this long is closed")
      ->capture_default_str();
  app.add_option("--frame-timeout-ms", frame_timeout_ms,
                 "After Hello, a frame whose first bytes arrived must complete this soon or the session is closed; 0: no limit")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--max-jobs", max_jobs, "Jobs the store may hold; a session for a new job over it is refused (\"too many jobs\")")
      ->check(CLI::Range(size_t{1}, size_t{1} << 31))
      ->capture_default_str();
  app.add_option("--max-sessions", max_sessions,
                 "Open ingest sessions at most; a connection over it gets Close{ResourceExhausted, \"too many sessions\"}")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30))
      ->capture_default_str();
  app.add_option("--max-batch-decoded-bytes", max_batch_decoded_bytes,
                 "A StepBatch whose records decode to more than this closes its session (ResourceExhausted)")
      ->check(CLI::Range(size_t{1} << 16, size_t{1} << 40))
      ->capture_default_str();
  app.add_option("--drain-timeout-ms", drain_timeout_ms, "On shutdown, how long to wait for sessions to drain")
      ->capture_default_str();
  app.add_option("--diagnose-interval-ms", diagnose_interval_ms,
                 "Continuous diagnosis: a job's new steps are diagnosed once every rank has sent them, and at least this often (findings logged and on /metrics); 0: off")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  if ((block_steps & (block_steps - 1)) != 0) return fail("--block-steps must be a power of two", 2);

  ingest::ServerOptions options;
  if (Status s = wire::parseHostPort(ingest_addr, &options.host, &options.port); !s.isOk()) {
    return fail("--ingest: " + s.message(), 2);
  }
  std::string http_host;
  uint16_t http_port = 0;
  if (!http_addr.empty()) {
    if (Status s = wire::parseHostPort(http_addr, &http_host, &http_port); !s.isOk()) return fail("--http: " + s.message(), 2);
  }
  std::optional<query::HttpTokens> http_tokens;
  if (!http_tokens_file.empty()) {
    if (http_addr.empty()) return fail("--http-tokens needs --http", 2);
    auto tokens = query::HttpTokens::load(http_tokens_file);
    if (!tokens.isOk()) return fail(tokens.status().message(), 2);
    std::fprintf(stderr, "argusd: http tokens file %s: %zu tokens\n", http_tokens_file.c_str(), tokens->entries());
    http_tokens = std::move(tokens.value());
  }
  if (!auth_file.empty()) {
    auto table = ingest::AuthTable::load(auth_file);
    if (!table.isOk()) return fail(table.status().message(), 2);
    std::fprintf(stderr, "argusd: auth file %s: %zu entries\n", auth_file.c_str(), table->entries());
    options.auth = std::move(table.value());
  } else {
    std::fprintf(stderr, "argusd: no --auth file: accepting every job (open mode)\n");
  }
  options.io_threads = io_threads;
  options.limits.max_frame_bytes = max_frame_bytes;
  options.session_inflight_bytes = session_buffer_bytes;
  options.global_inflight_bytes = ingest_buffer_bytes;
  options.seal_interval = std::chrono::milliseconds(seal_interval_ms);
  options.retention_interval = std::chrono::seconds(retention_interval_s);
  options.seal_nice = seal_nice;
  options.max_head_bytes = max_head_bytes;
  options.committer.threads = commit_threads;
  options.hello_timeout = std::chrono::milliseconds(hello_timeout_ms);
  options.drain_timeout = std::chrono::milliseconds(drain_timeout_ms);
  options.frame_timeout = std::chrono::milliseconds(frame_timeout_ms);
  options.max_sessions = max_sessions;
  options.max_jobs = max_jobs;
  options.batch_decoded_bytes = max_batch_decoded_bytes;

  // Signals are taken synchronously by this thread; every thread started below inherits
  // the blocked mask, so SIGTERM never interrupts an io or committer thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  storage::StoreOptions store_options;
  store_options.sync_wal = sync_wal == "on";
  store_options.block_steps = block_steps;
  auto opened = storage::Store::open(data_dir, store_options);
  if (!opened.isOk()) return fail("cannot open the store at " + data_dir + ": " + opened.status().toString());
  std::unique_ptr<storage::Store> store = std::move(opened.value());

  // Continuous diagnosis: each new finding on stderr and /metrics (docs/query/diagnosis.md).
  std::unique_ptr<diagnose::DiagnosisMonitor> monitor;
  if (diagnose_interval_ms > 0) {
    diagnose::MonitorOptions mo;
    mo.interval = std::chrono::milliseconds(diagnose_interval_ms);
    monitor = std::make_unique<diagnose::DiagnosisMonitor>(*store, mo, [](const diagnose::MonitorFinding& m) {
      const diagnose::Finding& f = m.finding;
      std::string where = f.link.empty() ? (f.ranks.empty() ? "" : " ranks " + diagnose::rankList(f.ranks)) : " link " + f.link;
      if (f.pp_rank) where += " stage " + std::to_string(*f.pp_rank);
      std::fprintf(stderr, "argusd: finding %s in job %s, steps %llu-%llu,%s (%llu steps after onset, %.2f s after its steps arrived): %s\n",
                   diagnose::findingKindName(f.kind), m.job.c_str(), static_cast<unsigned long long>(f.from_step), static_cast<unsigned long long>(f.to_step),
                   where.c_str(), static_cast<unsigned long long>(m.steps_after_onset), m.lag_s, f.evidence.c_str());
    });
    monitor->start();
    // A pass as soon as a job's next step is durable on every rank.
    options.committer.on_durable = [m = monitor.get()](storage::JobId job, std::span<const model::StepSummary> records) { m->noteDurable(job, records); };
  }

  ingest::IngestMetrics metrics;
  auto server = std::make_unique<ingest::Server>(*store, metrics, std::move(options));
  if (Status s = server->start(); !s.isOk()) return fail(s.toString());
  std::printf("argusd: ingest listening on %s:%u\n", server->host().c_str(), static_cast<unsigned>(server->port()));
  std::fflush(stdout);

  std::unique_ptr<query::HttpRouter> router;
  std::unique_ptr<query::HttpServer> http;
  if (!http_addr.empty()) {
    router = std::make_unique<query::HttpRouter>(*store, [&metrics, &monitor](std::string* out) {
      ingest::writePrometheus(metrics, out);
      if (monitor) monitor->writePrometheus(out);
    });
    router->setFlightRecorderDumper([srv = server.get()](const std::string& job, const std::vector<uint32_t>& ranks, uint64_t from,
                                                         uint64_t to) { return srv->requestFlightRecorderDump(job, ranks, from, to); });
    if (http_tokens) router->setTokens(std::move(*http_tokens));
    http = std::make_unique<query::HttpServer>(server->ioContext(), *router);
    auto endpoint = http->listen(http_host, http_port);
    if (!endpoint.isOk()) {
      server->shutdown();
      return fail("cannot listen for HTTP on " + http_addr + ": " + endpoint.status().toString());
    }
    std::printf("argusd: http listening on %s:%u\n", http_host.c_str(), static_cast<unsigned>(endpoint->port()));
    std::fflush(stdout);
  }
  std::fprintf(stderr, "argusd: serving %s (sync-wal %s, block-steps %u, max frame %u bytes)\n", data_dir.c_str(),
               sync_wal.c_str(), block_steps, max_frame_bytes);

  // Memory that queries and sessions free stays with the allocator for reuse (faulting it
  // in again cost a rolling median more than its arithmetic: cli/malloc_conf.cpp); every
  // interval in which no statement started or ran, it goes back to the OS.
  const timespec interval{10, 0};
  uint64_t started = 0;
  int sig = -1;
  while (sig < 0) {
    sig = sigtimedwait(&signals, nullptr, &interval);
    if (sig >= 0) break;
    const uint64_t now = router ? router->queries().started() : 0;
    const bool queried = now != started || (router && router->queries().running() > 0);
    started = now;
    if (!queried) releaseFreedMemory();
  }
  std::fprintf(stderr, "argusd: %s: draining\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");

  if (http) http->stop();
  if (monitor) monitor->stop();
  server->shutdown();
  http.reset();
  server.reset();  // its committer tells the monitor of writes: gone first
  monitor.reset();
  Status sealed = Status::ok();
  if (seal_on_exit == "all") {
    sealed = store->sealAll();
  } else if (seal_on_exit == "ready") {
    sealed = store->sealReady();
  }
  if (!sealed.isOk()) std::fprintf(stderr, "argusd: seal on exit failed: %s\n", sealed.toString().c_str());
  store.reset();
  std::fprintf(stderr, "argusd: stopped (%llu records committed in this run)\n",
               static_cast<unsigned long long>(metrics.records.load()));
  return sealed.isOk() ? 0 : 1;
}
