#include "diagnose/job_reader.h"

#include <algorithm>

#include "base/worker_threads.h"
#include "diagnose/median.h"

namespace argus::diagnose {

namespace {

// Marker names that announce a spike on purpose.
bool expectedSpike(const std::string& name) {
  for (const char* word : {"checkpoint", "eval", "save"}) {
    if (name.find(word) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

JobReader::JobReader(const storage::Store& store, std::string job, std::function<void()> check, std::function<void(size_t)> hold)
    : store_(store), job_(std::move(job)), check_(std::move(check)), hold_(std::move(hold)) {}

Status JobReader::exists() const { return store_.findJob(job_).status(); }

Result<std::optional<uint64_t>> JobReader::lastStep() const { return store_.lastStep(job_); }

Result<std::vector<model::RankTopology>> JobReader::topology() const { return store_.topology(job_); }

Status JobReader::scan(storage::Table table, std::vector<std::string> columns, uint64_t from, uint64_t to, const std::vector<uint32_t>& ranks,
                       const std::function<void(const storage::ColumnBatch&)>& each) const {
  storage::ScanSpec spec;
  spec.job = job_;
  spec.table = table;
  spec.columns = std::move(columns);
  spec.from_step = from;
  spec.to_step = to == UINT64_MAX ? to : to + 1;
  spec.ranks = ranks;
  spec.threads = defaultWorkerThreads();
  spec.batch_rows = 8192;
  Result<std::unique_ptr<storage::ScanCursor>> cursor = store_.scan(spec);
  if (!cursor.isOk()) return cursor.status();
  storage::ColumnBatch batch;
  for (;;) {
    check_();
    bool has_rows = false;
    ARGUS_RETURN_IF_ERROR((*cursor)->next(&batch, &has_rows));
    if (!has_rows) return Status::ok();
    each(batch);
  }
}

Result<std::vector<StepPoint>> JobReader::stepSeries(const std::string& column, uint64_t from, uint64_t to, std::optional<uint32_t> rank) const {
  if (storage::findColumn(storage::Table::kSteps, column) == nullptr) return Status::invalidArgument("no column '" + column + "' in table steps");
  if (to < from) return std::vector<StepPoint>{};
  // Per step, in an array over the range when it is short; else by step number (a job
  // whose steps start far from the range's start: after a restart at step 10^8).
  const uint64_t n = to - from + 1;
  constexpr uint64_t kDenseSteps = uint64_t{1} << 22;
  std::vector<StepPoint> dense(std::min(n, kDenseSteps));
  std::map<uint64_t, StepPoint> sparse;
  auto point = [&](uint64_t step) -> StepPoint& { return n <= kDenseSteps ? dense[step - from] : sparse[step]; };
  std::vector<uint32_t> ranks;
  if (rank) ranks.push_back(*rank);
  std::vector<std::string> columns = {"step", "start_ns", "end_ns", column};
  const size_t value_at = column == "start_ns" ? 1 : column == "end_ns" ? 2 : 3;
  if (value_at < 3) columns.pop_back();
  ARGUS_RETURN_IF_ERROR(scan(storage::Table::kSteps, columns, from, to, ranks, [&](const storage::ColumnBatch& b) {
    const auto& steps = b.columns[0].ints;
    const auto& values = b.columns[value_at].ints;
    for (size_t i = 0; i < b.rows; ++i) {
      StepPoint& p = point(static_cast<uint64_t>(steps[i]));
      const double v = static_cast<double>(values[i]);
      const int64_t start = b.columns[1].ints[i], end = b.columns[2].ints[i];
      p.value = p.ranks == 0 ? v : std::max(p.value, v);
      p.start_ns = p.ranks == 0 ? start : std::min(p.start_ns, start);
      p.end_ns = p.ranks == 0 ? end : std::max(p.end_ns, end);
      ++p.ranks;
    }
  }));
  hold_(dense.capacity() * sizeof(StepPoint) + sparse.size() * (sizeof(StepPoint) + 48));
  // Marker events naming a checkpoint or an evaluation flag their step.
  Result<std::vector<model::StringDictEntry>> names = store_.names(job_);
  if (!names.isOk()) return names.status();
  std::vector<uint64_t> spike_names;
  for (const auto& e : *names) {
    if (expectedSpike(e.text)) spike_names.push_back(e.id);
  }
  if (!spike_names.empty()) {
    ARGUS_RETURN_IF_ERROR(scan(storage::Table::kEvents, {"step", "kind", "name_id"}, from, to, ranks, [&](const storage::ColumnBatch& b) {
      for (size_t i = 0; i < b.rows; ++i) {
        const auto name = static_cast<uint64_t>(b.columns[2].ints[i]);
        if (b.columns[1].ints[i] == static_cast<int64_t>(model::EventKind::kMarker) &&
            std::find(spike_names.begin(), spike_names.end(), name) != spike_names.end()) {
          point(static_cast<uint64_t>(b.columns[0].ints[i])).expected = true;
        }
      }
    }));
  }
  std::vector<StepPoint> out;
  for (uint64_t i = 0; i < dense.size() && n <= kDenseSteps; ++i) {
    if (dense[i].ranks == 0) continue;
    dense[i].step = from + i;
    out.push_back(dense[i]);
  }
  for (auto& [step, p] : sparse) {
    if (p.ranks == 0) continue;  // an event's step with no steps row
    p.step = step;
    out.push_back(p);
  }
  return out;
}

Result<JobReader::RankPhasesPair> JobReader::rankPhases(uint64_t from, uint64_t split, uint64_t to, uint32_t rank_count) const {
  RankPhasesPair out;
  out[0].resize(rank_count);
  out[1].resize(rank_count);
  constexpr int kColumns = 6;
  std::vector<int64_t> values[2][kColumns];  // the current rank's, per side of the split
  int64_t current = -1;
  auto finish = [&] {
    if (current < 0 || current >= static_cast<int64_t>(rank_count)) return;
    for (int side = 0; side < 2; ++side) {
      RankPhases& p = out[side][current];
      p.steps = static_cast<uint32_t>(values[side][0].size());
      double* fields[kColumns] = {&p.iter, &p.compute, &p.exposed, &p.bubble, &p.data_wait, &p.idle};
      for (int c = 0; c < kColumns; ++c) {
        *fields[c] = medianOf(values[side][c]);
        values[side][c].clear();
      }
    }
  };
  ARGUS_RETURN_IF_ERROR(scan(storage::Table::kSteps, {"rank", "step", "iter_ns", "compute_ns", "comm_exposed_ns", "bubble_ns", "data_wait_ns", "gpu_idle_ns"},
                             from, to, {}, [&](const storage::ColumnBatch& b) {
                               for (size_t i = 0; i < b.rows; ++i) {
                                 if (b.columns[0].ints[i] != current) {
                                   finish();
                                   current = b.columns[0].ints[i];
                                 }
                                 const int side = static_cast<uint64_t>(b.columns[1].ints[i]) < split ? 0 : 1;
                                 for (int c = 0; c < kColumns; ++c) values[side][c].push_back(b.columns[c + 2].ints[i]);
                               }
                             }));
  finish();
  hold_(2 * rank_count * sizeof(RankPhases));
  return out;
}

Result<JobReader::CollectivesPair> JobReader::collectives(uint64_t from, uint64_t split, uint64_t to, uint32_t rank_count) const {
  CollectivesPair out;
  out[0].resize(rank_count);
  out[1].resize(rank_count);
  ARGUS_RETURN_IF_ERROR(scan(storage::Table::kCollectives, {"rank", "step", "op", "communicator", "peer_rank", "bytes", "total_ns", "wait_ns"}, from, to, {},
                             [&](const storage::ColumnBatch& b) {
                               for (size_t i = 0; i < b.rows; ++i) {
                                 const auto rank = static_cast<uint64_t>(b.columns[0].ints[i]);
                                 if (rank >= rank_count) continue;
                                 const int side = static_cast<uint64_t>(b.columns[1].ints[i]) < split ? 0 : 1;
                                 CollectiveKey key{static_cast<uint8_t>(b.columns[2].ints[i]), static_cast<uint64_t>(b.columns[3].ints[i]),
                                                   static_cast<uint32_t>(b.columns[4].ints[i])};
                                 CollectiveSums& s = out[side][rank][key];
                                 const int64_t total = b.columns[6].ints[i], wait = std::max<int64_t>(0, b.columns[7].ints[i]);
                                 s.bytes += static_cast<uint64_t>(b.columns[5].ints[i]);
                                 s.transfer_ns += static_cast<double>(std::max<int64_t>(0, total - wait));
                                 s.wait_ns += static_cast<double>(wait);
                               }
                             }));
  size_t entries = 0;
  for (const auto& side : out) {
    for (const auto& m : side) entries += m.size();
  }
  hold_(2 * rank_count * sizeof(out[0][0]) + entries * (sizeof(CollectiveKey) + sizeof(CollectiveSums) + 32));  // map nodes
  return out;
}

Result<std::vector<JobReader::Event>> JobReader::events(uint8_t kind, uint64_t from, uint64_t to) const {
  std::vector<Event> out;
  ARGUS_RETURN_IF_ERROR(scan(storage::Table::kEvents, {"rank", "step", "kind", "value"}, from, to, {}, [&](const storage::ColumnBatch& b) {
    for (size_t i = 0; i < b.rows; ++i) {
      if (b.columns[2].ints[i] != kind) continue;
      out.push_back(Event{static_cast<uint32_t>(b.columns[0].ints[i]), static_cast<uint64_t>(b.columns[1].ints[i]), static_cast<uint64_t>(b.columns[3].ints[i])});
    }
  }));
  return out;
}

Result<std::vector<std::pair<uint64_t, uint64_t>>> JobReader::stackSamples(uint64_t from, uint64_t to, uint32_t rank_count,
                                                                           const std::function<bool(uint64_t)>& in) const {
  std::vector<std::pair<uint64_t, uint64_t>> out(rank_count);
  ARGUS_RETURN_IF_ERROR(scan(storage::Table::kStacks, {"rank", "stack_id", "samples"}, from, to, {}, [&](const storage::ColumnBatch& b) {
    for (size_t i = 0; i < b.rows; ++i) {
      const auto rank = static_cast<uint64_t>(b.columns[0].ints[i]);
      if (rank >= rank_count) continue;
      const auto samples = static_cast<uint64_t>(b.columns[2].ints[i]);
      out[rank].first += samples;
      if (in(static_cast<uint64_t>(b.columns[1].ints[i]))) out[rank].second += samples;
    }
  }));
  return out;
}

Result<std::map<uint32_t, std::map<uint64_t, KernelSums>>> JobReader::kernels(const std::vector<uint32_t>& ranks, uint64_t from, uint64_t to) const {
  std::map<uint32_t, std::map<uint64_t, KernelSums>> out;
  if (ranks.empty()) return out;
  ARGUS_RETURN_IF_ERROR(scan(storage::Table::kKernels, {"rank", "signature", "count", "total_ns", "hist"}, from, to, ranks, [&](const storage::ColumnBatch& b) {
    for (size_t i = 0; i < b.rows; ++i) {
      KernelSums& k = out[static_cast<uint32_t>(b.columns[0].ints[i])][static_cast<uint64_t>(b.columns[1].ints[i])];
      k.count += static_cast<uint64_t>(b.columns[2].ints[i]);
      k.total_ns += b.columns[3].ints[i];
      ++k.steps;
      k.hist.merge(b.columns[4].hists[i]);
    }
  }));
  return out;
}

}  // namespace argus::diagnose
