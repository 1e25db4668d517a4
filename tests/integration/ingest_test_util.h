// Helpers shared by the ingest integration tests: raw protocol clients and a store reader.
#pragma once

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/step_chain.h"
#include "storage/store.h"
#include "cli/argusd_process.h"
#include "cli/http_client.h"
#include "simulate/synthetic_steps.h"
#include "wire/messages.h"
#include "wire/step_sender.h"
#include "wire/tcp.h"

namespace argus::testing {

// The integration tests' vocabulary: synthetic ranks and the argusd child process.
using cli::ArgusdProcess;
using simulate::SyntheticOptions;
using simulate::SyntheticSteps;

using namespace std::chrono_literals;

// A file of /proc/PID (status, maps); empty when unreadable.
inline std::string procFile(pid_t pid, const char* name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + name);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// VmRSS of a process in KiB (0 when unreadable).
inline long rssKib(pid_t pid) {
  const std::string status = procFile(pid, "status");
  const size_t at = status.find("VmRSS:");
  return at == std::string::npos ? 0 : std::stol(status.substr(at + 6));
}

// One sample of argusd's GET /metrics, by its name and labels.
inline double metricSample(uint16_t http_port, const std::string& sample) {
  Result<cli::HttpReply> m = cli::httpRequest("127.0.0.1", http_port, "GET", "/metrics");
  REQUIRE(m.isOk());
  const size_t at = m->body.find("\n" + sample + " ");
  REQUIRE_MESSAGE(at != std::string::npos, sample);
  return std::stod(m->body.substr(at + sample.size() + 2));
}

struct StoredRow {
  uint64_t attempt = 0;
  int64_t iter_ns = 0;
};

// (rank, step) -> every row the store returns for it (exactly one when all is well).
using StoredRows = std::map<std::pair<uint32_t, uint64_t>, std::vector<StoredRow>>;

// Opens the store read-only (argusd must not be running) and scans the steps table.
inline Status scanSteps(const std::string& data_dir, const std::string& job, StoredRows* out) {
  storage::StoreOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  auto store = storage::Store::open(data_dir, options);
  if (!store.isOk()) return store.status().withContext("open " + data_dir);
  storage::ScanSpec spec;
  spec.job = job;
  spec.table = storage::Table::kSteps;
  spec.columns = {"rank", "step", "attempt", "iter_ns"};
  auto cursor = store.value()->scan(spec);
  if (!cursor.isOk()) return cursor.status().withContext("scan " + job);
  storage::ColumnBatch batch;
  for (;;) {
    bool has_rows = false;
    ARGUS_RETURN_IF_ERROR(cursor.value()->next(&batch, &has_rows));
    if (!has_rows) break;
    auto column = [&](const char* name) -> const storage::Column* {
      for (const auto& c : batch.columns)
        if (c.name == name) return &c;
      return nullptr;
    };
    const auto* rank = column("rank");
    const auto* step = column("step");
    const auto* attempt = column("attempt");
    const auto* iter = column("iter_ns");
    if (!rank || !step || !attempt || !iter) return Status::corruption("scan batch lacks a requested column");
    for (size_t i = 0; i < batch.rows; ++i) {
      (*out)[{static_cast<uint32_t>(rank->ints[i]), static_cast<uint64_t>(step->ints[i])}].push_back(
          {static_cast<uint64_t>(attempt->ints[i]), iter->ints[i]});
    }
  }
  return Status::ok();
}

// Every sent (rank, step) -> iter_ns is stored exactly once with that iter_ns, and nothing else.
inline void checkStoredOnce(const std::string& data_dir, const std::string& job, const std::map<std::pair<uint32_t, uint64_t>, int64_t>& sent) {
  StoredRows rows;
  Status s = scanSteps(data_dir, job, &rows);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(rows.size() == sent.size());
  for (const auto& [key, iter] : sent) {
    auto it = rows.find(key);
    REQUIRE_MESSAGE(it != rows.end(), "rank " << key.first << " step " << key.second << " missing");
    REQUIRE(it->second.size() == 1);
    CHECK(it->second[0].iter_ns == iter);
  }
}

inline wire::Hello makeHello(const std::string& job, uint32_t rank, const std::string& token = "") {
  wire::Hello h;
  h.job = job;
  h.auth_token = token;
  h.topology.rank = rank;
  h.topology.world_size = 1024;
  h.topology.host = "test-host";
  h.client = "argus-test/0.1";
  return h;
}

// A raw protocol client for tests that need to misbehave.
struct RawClient {
  wire::FrameConnection conn;
  model::ChainedStepEncoder encoder;  // cut at the block_steps of the Welcome hello() read
  uint64_t next_seq = 1;

  Status connect(uint16_t port) {
    auto c = wire::FrameConnection::connect("127.0.0.1", port, 5s);
    if (!c.isOk()) return c.status();
    conn = std::move(c.value());
    return Status::ok();
  }
  // Sends Hello and returns the first reply (Welcome or Close).
  Status hello(const wire::Hello& h, wire::ServerMessage* reply) {
    ARGUS_RETURN_IF_ERROR(conn.write(wire::encodeHello(h)));
    ARGUS_RETURN_IF_ERROR(conn.readServerMessage(reply, 10s));
    if (reply->kind == wire::ServerMessage::Kind::kWelcome) encoder.setBlockSteps(reply->welcome.block_steps);
    return Status::ok();
  }
  Status sendRecords(const std::vector<model::StepRecord>& records) {
    std::vector<std::string> encoded;
    for (const auto& r : records) {
      encoded.emplace_back();
      encoder.encode(r, &encoded.back());
    }
    std::string frame = wire::encodeStepBatch(next_seq, encoded);
    next_seq += records.size();
    return conn.write(frame);
  }
  // Reads messages until an Ack >= up_to, or a Close (returned in *close).
  Status waitAck(uint64_t up_to, wire::CloseMsg* close = nullptr) {
    for (;;) {
      wire::ServerMessage m;
      ARGUS_RETURN_IF_ERROR(conn.readServerMessage(&m, 20s));
      if (m.kind == wire::ServerMessage::Kind::kAck && m.ack_up_to >= up_to) return Status::ok();
      if (m.kind == wire::ServerMessage::Kind::kClose) {
        if (close) *close = m.close;
        return Status::aborted("Close: " + m.close.reason);
      }
    }
  }
  // Reads messages until a Close; returns it (code kAborted and the error as reason if
  // the connection ends without one).
  wire::CloseMsg waitClose() {
    for (;;) {
      wire::ServerMessage m;
      Status s = conn.readServerMessage(&m, 20s);
      if (!s.isOk()) return {Status::Code::kAborted, "no Close: " + s.toString()};
      if (m.kind == wire::ServerMessage::Kind::kClose) return m.close;
    }
  }
};

inline wire::StepSenderOptions senderOptions(uint16_t port, const std::string& job, uint32_t rank) {
  wire::StepSenderOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.job = job;
  o.topology.rank = rank;
  o.topology.world_size = 1024;
  o.topology.host = "test-host";
  o.client = "argus-test/0.1";
  return o;
}

// Registers a generator's dictionary with a sender.
inline void addDictionary(wire::StepSender& sender, const SyntheticSteps& gen) {
  sender.addKernels(gen.dictionary().kernels);
  sender.addStacks(gen.dictionary().stacks);
  sender.addStrings(gen.dictionary().strings);
}

// Streams `steps` synthetic records from each of `ranks` ranks of `job` (`signatures` kernel
// signatures per step) and waits for their acks; returns the last rank's kernel dictionary.
inline std::vector<model::KernelDictEntry> sendSyntheticSteps(uint16_t port, const std::string& job, uint32_t ranks,
                                                              uint32_t steps, uint32_t signatures = 16) {
  std::vector<model::KernelDictEntry> kernels;
  for (uint32_t rank = 0; rank < ranks; ++rank) {
    SyntheticSteps gen(rank, signatures);
    wire::StepSender sender(senderOptions(port, job, rank));
    addDictionary(sender, gen);
    for (uint32_t i = 0; i < steps; ++i) REQUIRE(sender.send(gen.next()).isOk());
    REQUIRE(sender.close(std::chrono::seconds(30)).isOk());
    kernels = gen.dictionary().kernels;
  }
  return kernels;
}

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout, and stderr unless left out
};

// A loopback port free now (bound, read and released): for a server a test starts, stops
// and starts again on the same port.
inline uint16_t freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Runs the `argus` binary under test (ARGUS_BIN, set by CTest) with `args`; `env`
// ("NAME=value ...", may be empty) is set for that run only.
inline RunResult runArgus(const std::string& args, bool with_stderr = true, const std::string& env = "") {
  const char* bin = std::getenv("ARGUS_BIN");
  REQUIRE_MESSAGE(bin != nullptr, "ARGUS_BIN is not set (run under ctest)");
  std::string command = (env.empty() ? "" : "env " + env + " ") + std::string(bin) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  RunResult r;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Opens a session for `job`/`rank` and checks it is welcomed.
inline void welcomed(RawClient& c, uint16_t port, const std::string& job, uint32_t rank, const std::string& token = "") {
  REQUIRE(c.connect(port).isOk());
  wire::ServerMessage reply;
  Status s = c.hello(makeHello(job, rank, token), &reply);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  REQUIRE_MESSAGE(reply.kind == wire::ServerMessage::Kind::kWelcome, reply.close.reason);
}

// One small synthetic record of `rank` at `step`.
inline model::StepRecord recordAt(uint32_t rank, uint64_t step) {
  SyntheticOptions o;
  o.signatures = 4;
  o.first_step = step;
  SyntheticSteps gen(rank, o);
  return gen.next();
}

}  // namespace argus::testing
