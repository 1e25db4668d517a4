// ArgusdProcess: starts the real argusd binary (ARGUSD_BIN) for the demo, integration tests
// and benchmarks, on a free loopback port and a temporary data directory, and stops it with
// SIGTERM or SIGKILL.
//
//   argus::cli::ArgusdProcess argusd;            // temp dir, removed at destruction
//   REQUIRE(argusd.start().isOk());                  // waits for "ingest listening on"
//   ... connect to argusd.ingestPort() ...
//   int rc = argusd.stop();                          // SIGTERM, waits, returns exit code
//
// argusd's stdout and stderr go to files in the work directory (stdout.log, stderr.log);
// stderrTail() returns the end of the log for failure messages.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace argus::cli {

// Path of the argusd binary from ARGUSD_BIN ("argusd" if unset).
std::string argusdBinary();

// Makes a fresh directory under `parent`, else $TMPDIR (or /tmp); "" when it cannot.
// removeTree() deletes it.
std::string makeTempDir(const std::string& prefix, const std::string& parent = "");
void removeTree(const std::string& path);

class ArgusdProcess {
 public:
  // `work_dir` empty: a fresh temp dir, deleted at destruction. The store lives in
  // work_dir/data, so restarts on the same object reuse it.
  explicit ArgusdProcess(std::string work_dir = "");
  ~ArgusdProcess();
  ArgusdProcess(const ArgusdProcess&) = delete;
  ArgusdProcess& operator=(const ArgusdProcess&) = delete;

  // Extra command-line arguments for the next start(), e.g. {"--auth", path}.
  void setArgs(std::vector<std::string> args) { args_ = std::move(args); }
  // Ingest port for the next start(); 0 (the default) lets argusd pick. After a first
  // start, restart on the same port with setIngestPort(ingestPort()).
  void setIngestPort(uint16_t port) { requested_port_ = port; }
  void setHttp(bool on) { http_ = on; }

  // Starts argusd and waits until it prints its listening lines, or exits. The bound is
  // generous: a start replays the WAL, and a replay after a kill, under the sanitizers on a
  // loaded 2-core machine, once took over 20 s (crash_sigkill_test in CI).
  Status start(std::chrono::milliseconds timeout = std::chrono::seconds(120));
  // SIGTERM; waits up to `timeout`; returns the exit code (128+signal if killed,
  // -1 if it had to be SIGKILLed after the timeout).
  int stop(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // SIGKILL and reap.
  void kill();
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  uint16_t ingestPort() const { return ingest_port_; }
  uint16_t httpPort() const { return http_port_; }
  const std::string& workDir() const { return work_dir_; }
  std::string dataDir() const { return work_dir_ + "/data"; }
  std::string stderrTail(size_t bytes = 4000) const;

 private:
  int waitExit(std::chrono::milliseconds timeout);

  std::string work_dir_;
  bool own_dir_ = false;
  std::vector<std::string> args_;
  uint16_t requested_port_ = 0;
  bool http_ = false;
  pid_t pid_ = -1;
  uint16_t ingest_port_ = 0;
  uint16_t http_port_ = 0;
  int starts_ = 0;
};

}  // namespace argus::cli
