// JobReader: what the diagnosis stages read of one job, through the store's scan API
// (only the columns, steps and ranks they need; chunks outside are skipped by statistics):
// the step-time series, per-rank summaries of a window of steps, collective transfers,
// events, stack samples and kernels. Each call is one scan.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/worker_threads.h"
#include "diagnose/rank_phases.h"
#include "model/duration_histogram.h"
#include "model/step_record.h"
#include "storage/store.h"

namespace argus::diagnose {

class RecentSteps;

struct StepPoint {
  uint64_t step = 0;
  double value = 0;     // the step's metric: max over ranks, or the one rank's
  uint32_t ranks = 0;   // ranks that reported it
  bool expected = false;  // a checkpoint or evaluation marker: a spike nobody should chase
  int64_t start_ns = 0, end_ns = 0;  // the earliest start and latest end over its ranks
};

// One rank's collective traffic of one kind over a window: sums over its calls.
struct CollectiveKey {
  uint8_t op = 0;
  uint64_t communicator = 0;
  uint32_t peer = model::CollectiveStat::kNoPeer;
  auto operator<=>(const CollectiveKey&) const = default;
};
struct CollectiveSums {
  uint64_t bytes = 0;
  double transfer_ns = 0;  // total minus wait (all of it when the source gave no wait)
  double wait_ns = 0;
  // Bytes per ns (GB/s) of the transfer part; 0 when unknown.
  double gbps() const { return transfer_ns > 0 ? static_cast<double>(bytes) / transfer_ns : 0; }
};
// A rank's collectives by kind: a few (its rings and pipeline neighbours), so a flat list.
class RankTraffic {
 public:
  using Entry = std::pair<CollectiveKey, CollectiveSums>;
  const CollectiveSums* find(const CollectiveKey& key) const;
  CollectiveSums& operator[](const CollectiveKey& key);
  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;
};

struct KernelSums {
  model::Phase phase = model::Phase::kUnknown;
  uint64_t count = 0;
  int64_t total_ns = 0;
  uint32_t steps = 0;  // steps it ran in
  model::DurationHistogram hist;
};

// A marker name that announces a spike on purpose (a checkpoint, an evaluation): the
// steps it marks are StepPoint::expected.
bool expectedSpike(const std::string& marker_name);

class JobReader {
 public:
  // `check` is called once per batch read (a query's deadline; it may throw); `hold` with
  // the bytes the call's result holds once it is built (a query's memory cap; it may throw).
  JobReader(const storage::Store& store, std::string job, std::function<void()> check = [] {}, std::function<void(size_t bytes)> hold = [](size_t) {});

  // NotFound naming the job when it has no data.
  Status exists() const;
  Result<std::optional<uint64_t>> lastStep() const;
  Result<std::vector<model::RankTopology>> topology() const;

  // Per step of [from, to] with data: `column` of the steps table, max over the ranks (the
  // job waits for its slowest rank), or of `rank` alone.
  Result<std::vector<StepPoint>> stepSeries(const std::string& column, uint64_t from, uint64_t to, std::optional<uint32_t> rank) const;
  // Several columns in one scan: a series per column, in their order, over `ranks` (empty:
  // all). Without `times`, start_ns and end_ns are not read (StepPoint's stay 0): two columns
  // fewer to decode.
  enum class Times { kRead, kSkip };
  Result<std::vector<std::vector<StepPoint>>> stepSeries(const std::vector<std::string>& columns, uint64_t from, uint64_t to,
                                                         const std::vector<uint32_t>& ranks, Times times = Times::kRead) const;
  // Per window of `windows` and per rank (indexed by rank; ranks without data have steps ==
  // 0): over its baseline in [0] and over the window in [1]; iter and idle only of the ranks
  // `detailed` marks (indexed by rank; JIT suspects). From recent steps where they hold all
  // of the windows' steps (serveRecent), else one scan per run of nearby windows, so a chunk
  // is decoded once however many windows and baselines it holds.
  Result<std::vector<RankPhasesPair>> rankPhases(const std::vector<StepWindow>& windows, uint32_t rank_count,
                                                 const std::vector<bool>& detailed = {}) const;
  // Per window and per rank, the collectives of `ranks` (sorted; the others' stay empty),
  // split as rankPhases().
  using CollectivesPair = std::array<std::vector<RankTraffic>, 2>;
  Result<std::vector<CollectivesPair>> collectives(const std::vector<StepWindow>& windows, uint32_t rank_count, const std::vector<uint32_t>& ranks) const;
  // Events of the kinds in `kinds` over [from, to]: (rank, step, kind, value) in rank order.
  struct Event {
    uint32_t rank;
    uint64_t step;
    uint8_t kind;
    uint64_t value;
  };
  // Read of the ranks that have such events alone, which recent steps name where they hold
  // the steps (serveRecent), else a scan of the kind column finds.
  Result<std::vector<Event>> events(const std::vector<uint8_t>& kinds, uint64_t from, uint64_t to) const;
  // Per rank (indexed by rank; of `ranks` alone, sorted, not empty): stack samples over
  // [from, to], and those of stacks `in` selects.
  Result<std::vector<std::pair<uint64_t, uint64_t>>> stackSamples(uint64_t from, uint64_t to, uint32_t rank_count, const std::vector<uint32_t>& ranks,
                                                                   const std::function<bool(uint64_t stack_id)>& in) const;
  // Per rank (indexed by rank), its compute kernels over [from, to]: calls and time per
  // signature, communication kernels left out. Lighter than kernels(): no histograms.
  struct KernelTime {
    uint64_t signature = 0;
    uint64_t count = 0;
    int64_t total_ns = 0;
  };
  Result<std::vector<std::vector<KernelTime>>> computeKernelTimes(uint64_t from, uint64_t to, uint32_t rank_count) const;
  // Kernels of `ranks` over [from, to], per rank and signature.
  Result<std::map<uint32_t, std::map<uint64_t, KernelSums>>> kernels(const std::vector<uint32_t>& ranks, uint64_t from, uint64_t to) const;

  // rankPhases and events are served from `recent` (its owner's, outliving this reader) where
  // it holds every step they read of a job of `ranks` ranks: continuous mode's recent steps,
  // as ingest told them, so a pass over a 10,000-rank job decodes no records to find a
  // straggler.
  void serveRecent(const RecentSteps* recent, uint32_t ranks) {
    recent_ = recent;
    recent_ranks_ = ranks;
  }

  const storage::Store& store() const { return store_; }
  const std::string& job() const { return job_; }

 private:
  // Calls `each(part, batch, row, window, side)` for every row of `table`'s `columns` that
  // falls in a window (side 1) or its baseline (side 0) of `windows`, of `ranks` (empty:
  // all), and `after(part)` for every part once each scan ends. Parts as scanSplit's. columns[0]
  // must be "step".
  template <typename EachRow, typename AfterPart>
  Status scanWindows(storage::Table table, const std::vector<std::string>& columns, const std::vector<StepWindow>& windows,
                     const std::vector<uint32_t>& ranks, EachRow&& each, AfterPart&& after) const;
  // `table`'s `columns` over [from, to] (inclusive), of `ranks` (empty: all).
  storage::ScanSpec specFor(storage::Table table, std::vector<std::string> columns, uint64_t from, uint64_t to, const std::vector<uint32_t>& ranks) const;
  // Scans `table`'s `columns` over [from, to] (optionally some ranks), batch by batch.
  Status scan(storage::Table table, std::vector<std::string> columns, uint64_t from, uint64_t to, const std::vector<uint32_t>& ranks,
              const std::function<void(const storage::ColumnBatch&)>& each) const;
  // The same scan split among the worker threads: `each(part, batch)` runs on part's thread,
  // part < parts(). A part reads a run of whole ranks in (rank, step) order, so what is kept
  // per rank needs no lock, and work per rank (medians) runs on as many cores.
  static size_t parts() { return defaultWorkerThreads(); }
  Status scanSplit(storage::Table table, std::vector<std::string> columns, uint64_t from, uint64_t to, const std::vector<uint32_t>& ranks,
                   const std::function<void(size_t part, const storage::ColumnBatch&)>& each) const;

  const storage::Store& store_;
  std::string job_;
  std::function<void()> check_;
  std::function<void(size_t)> hold_;
  const RecentSteps* recent_ = nullptr;
  uint32_t recent_ranks_ = 0;
};

}  // namespace argus::diagnose
