// bench_store_write: ingest-side write throughput of the store (DESIGN §8 target:
// >= 200,000 rank-steps/s acked durable on 2 cores), plus seal and scan throughput and
// the bytes per rank-step in head and on disk. Prints figures; asserts nothing.
//
//   bench_store_write [ranks=64] [steps=400] [group=1024] [dir=/tmp/argus-bench-store] [block=256]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "model/step_codec.h"
#include "storage/chunk_writer.h"
#include "storage/rocks_store.h"
#include "simulate/synthetic_steps.h"

using namespace argus;
using namespace argus::storage;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct Run {
  double rows_per_s = 0;
  double seconds = 0;
};

// Writes every record once per pass, `group` records per writeGroup (one request per rank
// and group, as ingest commits a batch of sessions at once). With threads > 1 the ranks are
// split between threads that call writeGroup concurrently (RocksDB merges their batches
// into one WAL write).
Run writeAll(RocksStore& store, JobId job, std::vector<std::vector<model::StepRecord>>& per_rank, size_t group, int passes, int threads = 1) {
  if (threads > 1) {
    size_t ranks = per_rank.size(), steps = per_rank[0].size();
    std::vector<std::vector<std::vector<model::StepRecord>>> parts(threads);
    for (size_t r = 0; r < ranks; ++r) parts[r % threads].push_back(std::move(per_rank[r]));
    auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] { writeAll(store, job, parts[t], group / threads, passes); });
    }
    for (auto& t : ts) t.join();
    double secs = seconds(t0, Clock::now());
    for (size_t r = 0; r < ranks; ++r) per_rank[r] = std::move(parts[r % threads][r / threads]);
    return Run{static_cast<double>(ranks * steps * passes) / secs, secs};
  }
  size_t ranks = per_rank.size();
  size_t steps = per_rank[0].size();
  size_t per_req = std::max<size_t>(1, group / ranks);
  uint64_t rows = 0;
  auto t0 = Clock::now();
  for (int p = 0; p < passes; ++p) {
    if (p > 0) {
      for (auto& v : per_rank)
        for (auto& r : v) r.step += steps;
    }
    for (size_t s = 0; s < steps; s += per_req) {
      std::vector<WriteRequest> reqs(ranks);
      size_t n = std::min(per_req, steps - s);
      for (size_t r = 0; r < ranks; ++r) {
        reqs[r].job = job;
        reqs[r].records = std::span<const model::StepRecord>(per_rank[r].data() + s, n);
      }
      Status st = store.writeGroup(reqs);
      if (!st.isOk()) {
        std::fprintf(stderr, "writeGroup failed: %s\n", st.toString().c_str());
        std::exit(1);
      }
      rows += n * ranks;
    }
  }
  double secs = seconds(t0, Clock::now());
  return Run{rows / secs, secs};
}

// ChunkWriter::writeBlock alone, as the sealer drives it (TableBlock append, kernel
// histograms moved in and back, codec hints kept across blocks), without decoding or
// RocksDB: the encoding cost under sealAll. Best of `passes`, in us per rank-step; *bytes
// gets the chunk values' bytes per rank-step.
double writeBlockUsPerRow(std::vector<std::vector<model::StepRecord>>& per_rank, size_t block_steps, int passes, double* bytes) {
  TableBlock tables[kTableCount];
  auto hints = std::make_unique<CodecHints>();
  std::vector<ChunkKV> out;
  double best = 1e300;
  for (int p = 0; p < passes; ++p) {
    size_t rows = 0, value_bytes = 0;
    auto t0 = Clock::now();
    for (size_t r = 0; r < per_rank.size(); ++r) {
      auto& recs = per_rank[r];
      for (size_t base = 0; base < recs.size(); base += block_steps) {
        size_t end = std::min(recs.size(), base + block_steps);
        for (Table t : kAllTables) {
          TableBlock& tb = tables[tableIndex(t)];
          tb.reset(t);
          for (size_t i = base; i < end; ++i) {
            if (t == Table::kKernels) {
              tb.append(std::move(recs[i]));
            } else {
              tb.append(recs[i]);
            }
          }
          out.clear();
          ChunkWriter::writeBlock(0, static_cast<uint32_t>(r), 0, recs[base].step, tb, &out, hints.get());
          for (const ChunkKV& kv : out) value_bytes += kv.value.size();
          if (t == Table::kKernels) {
            auto& hists = tb.columns[histColumnOf(t)].hists;
            size_t h = 0;
            for (size_t i = base; i < end; ++i)
              for (auto& k : recs[i].kernels) k.hist = std::move(hists[h++]);
          }
        }
        rows += end - base;
      }
    }
    best = std::min(best, seconds(t0, Clock::now()) * 1e6 / static_cast<double>(rows));
    *bytes = static_cast<double>(value_bytes) / static_cast<double>(rows);
  }
  return best;
}

}  // namespace

// CPU time of the whole process (all threads, RocksDB's included), in seconds.
double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
  size_t ranks = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  size_t steps = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 400;
  size_t group = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1024;
  std::string dir = argc > 4 ? argv[4] : "/tmp/argus-bench-store";
  const uint32_t block = argc > 5 ? static_cast<uint32_t>(std::strtoul(argv[5], nullptr, 10)) : StoreOptions{}.block_steps;

  std::printf("bench_store_write: %zu ranks x %zu steps, 64 kernel signatures with histograms, %zu records per writeGroup\n", ranks, steps,
              group);
  std::vector<std::vector<model::StepRecord>> per_rank(ranks);
  auto g0 = Clock::now();
  for (size_t r = 0; r < ranks; ++r) {
    simulate::SyntheticSteps gen(static_cast<uint32_t>(r), 64);
    for (size_t s = 0; s < steps; ++s) per_rank[r].push_back(gen.next());
  }
  std::printf("  generated %zu records in %.2f s\n", ranks * steps, seconds(g0, Clock::now()));

  {
    double bytes = 0;
    double us = writeBlockUsPerRow(per_rank, block, 3, &bytes);
    std::printf("  writeBlock alone (%u steps): %9.2f us/rank-step %10.0f rank-steps/s  %6.1f B/rank-step (chunk values)\n", block, us, 1e6 / us, bytes);
  }

  for (bool sync : {true, false}) {
    std::filesystem::remove_all(dir);
    StoreOptions o;
    o.sync_wal = sync;
    o.block_steps = block;
    auto opened = RocksStore::openRocks(dir, o);
    if (!opened.isOk()) {
      std::fprintf(stderr, "%s\n", opened.status().toString().c_str());
      return 1;
    }
    auto store = std::move(opened).value();
    JobId job = store->ensureJob("bench").value();
    for (auto& v : per_rank)
      for (size_t i = 0; i < v.size(); ++i) v[i].step = i;
    Run w = writeAll(*store, job, per_rank, group, 2);
    std::printf("  writeGroup sync_wal=%-5s      %10.0f rows/s  (%.2f s)\n", sync ? "true" : "false", w.rows_per_s, w.seconds);
    for (auto& v : per_rank)
      for (auto& r : v) r.step += 2 * steps;
    w = writeAll(*store, job, per_rank, group, 1, 2);
    std::printf("  writeGroup sync_wal=%-5s x2 threads %7.0f rows/s  (%.2f s)\n", sync ? "true" : "false", w.rows_per_s, w.seconds);
    if (!sync) {
      uint64_t rows = 3 * ranks * steps;
      auto t0 = Clock::now();
      double cpu0 = processCpuSeconds();
      Status st = store->sealAll();
      double secs = seconds(t0, Clock::now());
      double cpu = processCpuSeconds() - cpu0;
      std::printf("  sealAll                      %10.0f rows/s  (%.2f s, %.1f CPU us/row) %s\n", rows / secs, secs, cpu * 1e6 / rows,
                  st.toString().c_str());
      t0 = Clock::now();
      store->compactAll();
      uint64_t chunk_sst = 0;
      store->handles().db->GetIntProperty(store->handles().chunk, "rocksdb.total-sst-files-size", &chunk_sst);
      std::printf("  on disk after seal+compact:  %10.1f B/rank-step (chunk SSTs)\n", static_cast<double>(chunk_sst) / rows);
      for (const char* table : {"steps", "kernels"}) {
        ScanSpec s;
        s.job = "bench";
        tableFromName(table, &s.table);
        auto cursor = store->scan(s);
        t0 = Clock::now();
        ColumnBatch b;
        bool has = true;
        uint64_t n = 0;
        while ((*cursor)->next(&b, &has).isOk() && has) n += b.rows;
        secs = seconds(t0, Clock::now());
        std::printf("  scan %-8s all columns     %10.0f rows/s  (%llu rows, %.2f s, %.0f rank-steps/s)\n", table, n / secs,
                    static_cast<unsigned long long>(n), secs, rows / secs);
      }
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}
