// bench_ingest: N concurrent senders stream realistic StepRecords into a real argusd on
// loopback; prints rank-steps acknowledged per second, bytes per rank-step on the wire and
// on disk after sealing, and argusd's peak memory. Durable acks (--sync-wal on) and
// crash-only durability (off) run side by side in one invocation, so the ratio between
// them is meaningful on a noisy shared machine.
//
// The records are encoded before the clock starts: in a cluster the encoding happens on
// the training hosts, not on argusd's machine, and the figure is argusd's.
//
//   bench_ingest [--senders 32] [--steps 4000] [--signatures 64] [--batch 128]
#include <sys/resource.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <sstream>
#include <thread>
#include <vector>

#include <unistd.h>

#include "model/step_chain.h"
#include "storage/rocks_store.h"
#include "cli/argusd_process.h"
#include "simulate/synthetic_steps.h"
#include "wire/messages.h"
#include "wire/tcp.h"

namespace {

using argus::Status;
using Clock = std::chrono::steady_clock;

struct Config {
  int senders = 32;
  int steps = 4000;
  int signatures = 64;
  int batch = 128;
};

struct SenderStream {
  std::string frames;  // Hello, Dictionary, StepBatches, Goodbye: back to back
  uint64_t records = 0;
  uint64_t record_bytes = 0;
  uint64_t kernels = 0;  // kernel signatures over all records
};

SenderStream encodeStream(const Config& c, uint32_t rank) {
  argus::simulate::SyntheticOptions options;
  options.signatures = c.signatures;
  // The target is stated at 64 signatures per rank-step: a recompile now and then (about
  // 2 in 4,000 steps), not the generator's default 20 that would make it ~75.
  options.recompile_rate = 0.0005;
  argus::simulate::SyntheticSteps gen(rank, options);
  SenderStream s;
  argus::wire::Hello hello;
  hello.job = "bench";
  hello.topology.rank = rank;
  hello.topology.world_size = static_cast<uint32_t>(c.senders);
  hello.client = "bench-ingest";
  s.frames += argus::wire::encodeHello(hello);
  argus::wire::Dictionary dict;
  dict.kernels = gen.dictionary().kernels;
  dict.stacks = gen.dictionary().stacks;
  dict.strings = gen.dictionary().strings;
  s.frames += argus::wire::encodeDictionary(dict);
  // argusd's default block_steps: the frames are built before its Welcome says so.
  argus::model::ChainedStepEncoder encoder({}, argus::storage::StoreOptions{}.block_steps);
  std::vector<std::string> batch;
  uint64_t seq = 1;
  for (int i = 0; i < c.steps; ++i) {
    std::string bytes;
    argus::model::StepRecord rec = gen.next();
    s.kernels += rec.kernels.size();
    encoder.encode(rec, &bytes);
    s.record_bytes += bytes.size();
    batch.push_back(std::move(bytes));
    if (static_cast<int>(batch.size()) == c.batch || i + 1 == c.steps) {
      s.frames += argus::wire::encodeStepBatch(seq, batch);
      seq += batch.size();
      batch.clear();
    }
  }
  s.records = static_cast<uint64_t>(c.steps);
  s.frames += argus::wire::encodeGoodbye();
  return s;
}

// Peak resident memory of a process in bytes (VmHWM), 0 if unreadable.
uint64_t peakRss(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// CPU time (user + system) a process has used so far, in seconds; 0 if unreadable. A
// figure that the noise of a shared machine moves much less than wall-clock throughput.
double cpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoull(f);
    if (i == 15) stime = std::stoull(f);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// CPU time (user + system) of the children this process has reaped, in seconds.
double childrenCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

uint64_t directoryBytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) total += entry.file_size(ec);
  }
  return total;
}

struct RunResult {
  double seconds = 0;
  uint64_t records = 0;
  uint64_t record_bytes = 0;
  uint64_t frame_bytes = 0;
  uint64_t chunk_bytes = 0;     // chunk keys + values after sealing
  uint64_t head_entries_left = 0;
  uint64_t dir_bytes = 0;       // whole data dir after sealing and compaction
  uint64_t peak_rss = 0;
  double cpu_acked = 0;  // argusd CPU seconds until the last ack
  double cpu_total = 0;  // ... until it exited (every seal included)
  double stop_seconds = 0;
  bool ok = true;
};

// Streams one sender's frames while a second thread reads acks; returns false on error.
bool runSender(uint16_t port, const SenderStream& stream) {
  auto conn = argus::wire::FrameConnection::connect("127.0.0.1", port);
  if (!conn.isOk()) {
    std::fprintf(stderr, "connect: %s\n", conn.status().toString().c_str());
    return false;
  }
  argus::wire::FrameConnection& fc = *conn;
  std::atomic<bool> acked_all{false};
  std::atomic<bool> failed{false};
  std::thread reader([&] {
    argus::wire::ServerMessage m;
    while (!acked_all) {
      Status s = fc.readServerMessage(&m, std::chrono::seconds(120));
      if (!s.isOk()) {
        std::fprintf(stderr, "read: %s\n", s.toString().c_str());
        failed = true;
        return;
      }
      if (m.kind == argus::wire::ServerMessage::Kind::kAck && m.ack_up_to >= stream.records) acked_all = true;
      if (m.kind == argus::wire::ServerMessage::Kind::kClose && !acked_all) {
        std::fprintf(stderr, "closed: %s\n", m.close.toStatus().toString().c_str());
        failed = true;
        return;
      }
    }
  });
  Status w = fc.write(stream.frames, std::chrono::seconds(300));
  if (!w.isOk()) {
    std::fprintf(stderr, "write: %s\n", w.toString().c_str());
    failed = true;
  }
  reader.join();
  return !failed && acked_all;
}

RunResult runOnce(const Config& c, const std::vector<SenderStream>& streams, bool sync_wal) {
  RunResult r;
  argus::cli::ArgusdProcess argusd;
  argusd.setArgs({"--sync-wal", sync_wal ? "on" : "off"});
  if (Status s = argusd.start(); !s.isOk()) {
    std::fprintf(stderr, "bench_ingest: argusd: %s\n", s.toString().c_str());
    r.ok = false;
    return r;
  }
  for (const SenderStream& s : streams) {
    r.records += s.records;
    r.record_bytes += s.record_bytes;
    r.frame_bytes += s.frames.size();
  }
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  auto t0 = Clock::now();
  for (const SenderStream& s : streams) {
    threads.emplace_back([&, port = argusd.ingestPort()] {
      if (!runSender(port, s)) failures++;
    });
  }
  for (std::thread& t : threads) t.join();
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.peak_rss = peakRss(argusd.pid());
  r.cpu_acked = cpuSeconds(argusd.pid());
  r.ok = failures == 0;
  // The process is gone after stop(): sample its CPU just before (the exit seal shows
  // in stop_seconds instead).
  auto s0 = Clock::now();
  double children0 = childrenCpuSeconds();
  if (argusd.stop() != 0) r.ok = false;
  r.stop_seconds = std::chrono::duration<double>(Clock::now() - s0).count();
  r.cpu_total = childrenCpuSeconds() - children0;  // argusd is the only child, reaped by stop()

  // After shutdown (argusd seals on SIGTERM): what the sealed data costs on disk.
  argus::storage::StoreOptions options;
  auto store = argus::storage::RocksStore::openRocks(argusd.dataDir(), options);
  if (!store.isOk()) {
    std::fprintf(stderr, "bench_ingest: reopen: %s\n", store.status().toString().c_str());
    r.ok = false;
    return r;
  }
  (void)(*store)->sealAll();
  (void)(*store)->forEachRaw("chunk", [&](std::string_view k, std::string_view v) {
    r.chunk_bytes += k.size() + v.size();
    return true;
  });
  (void)(*store)->forEachRaw("head", [&](std::string_view, std::string_view) {
    r.head_entries_left++;
    return true;
  });
  (void)(*store)->compactAll();
  store->reset();
  r.dir_bytes = directoryBytes(argusd.dataDir());
  return r;
}

int parseFlag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  c.senders = parseFlag(argc, argv, "--senders", c.senders);
  c.steps = parseFlag(argc, argv, "--steps", c.steps);
  c.signatures = parseFlag(argc, argv, "--signatures", c.signatures);
  c.batch = parseFlag(argc, argv, "--batch", c.batch);
  if (!std::getenv("ARGUSD_BIN")) {
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    setenv("ARGUSD_BIN", (std::filesystem::path(self).parent_path().parent_path() / "argusd").c_str(), 1);
  }

  std::printf("bench_ingest: %d senders x %d steps, %d kernel signatures per rank-step, %d records per frame\n",
              c.senders, c.steps, c.signatures, c.batch);
  std::vector<SenderStream> streams;
  for (int rank = 0; rank < c.senders; ++rank) streams.push_back(encodeStream(c, static_cast<uint32_t>(rank)));
  uint64_t kernels = 0, records = 0;
  for (const SenderStream& s : streams) kernels += s.kernels, records += s.records;
  std::printf("mean kernel signatures per rank-step: %.1f\n", static_cast<double>(kernels) / static_cast<double>(records));

  std::printf("\n%-14s %12s %10s %12s %12s %12s %10s %10s %12s %12s %8s\n", "durability", "rank-steps/s", "vs sync", "wire B/step",
              "chunk B/step", "disk B/step", "head left", "peak RSS", "CPU us/step", "all-in us", "stop s");
  double sync_rate = 0;
  for (bool sync_wal : {true, false}) {
    RunResult r = runOnce(c, streams, sync_wal);
    double rate = r.records / r.seconds;
    if (sync_wal) sync_rate = rate;
    std::printf("%-14s %12.0f %9.2fx %12.1f %12.1f %12.1f %10llu %7.0f MB %12.2f %12.2f %8.2f%s\n", sync_wal ? "sync-wal on" : "sync-wal off",
                rate, rate / sync_rate, static_cast<double>(r.record_bytes) / r.records,
                static_cast<double>(r.chunk_bytes) / r.records, static_cast<double>(r.dir_bytes) / r.records,
                static_cast<unsigned long long>(r.head_entries_left), r.peak_rss / 1e6, r.cpu_acked * 1e6 / r.records,
                r.cpu_total * 1e6 / r.records, r.stop_seconds,
                r.ok ? "" : "  (ERRORS)");
  }
  std::printf("\nwire B/step: encoded StepRecord bytes (frames add %.1f B/step of envelope); chunk B/step: sealed column\n"
              "chunks (keys + values); disk B/step: the whole data dir after sealing and compaction. CPU us/step:\n"
              "argusd's CPU time (user + system, all threads, sealing included) until the last ack, per rank-step;\n"
              "all-in us: argusd's CPU time until it exited, every seal included (2 cores / all-in = the rate argusd\n"
              "sustains with sealing keeping up); stop s: SIGTERM to exit, mostly sealing what the periodic sealer left.\n",
              static_cast<double>(streams[0].frames.size() - streams[0].record_bytes) / streams[0].records);
  return 0;
}
