#include "diagnose/job_reader.h"

#include <algorithm>

#include "base/worker_threads.h"
#include "diagnose/recent_steps.h"
#include "model/step_summary.h"

namespace argus::diagnose {

bool expectedSpike(const std::string& marker_name) {
  for (const char* word : {"checkpoint", "eval", "save"}) {
    if (marker_name.find(word) != std::string::npos) return true;
  }
  return false;
}

JobReader::JobReader(const storage::Store& store, std::string job, std::function<void()> check, std::function<void(size_t)> hold)
    : store_(store), job_(std::move(job)), check_(std::move(check)), hold_(std::move(hold)) {}

Status JobReader::exists() const { return store_.findJob(job_).status(); }

Result<std::optional<uint64_t>> JobReader::lastStep() const { return store_.lastStep(job_); }

Result<std::vector<model::RankTopology>> JobReader::topology() const { return store_.topology(job_); }

storage::ScanSpec JobReader::specFor(storage::Table table, std::vector<std::string> columns, uint64_t from, uint64_t to,
                                     const std::vector<uint32_t>& ranks) const {
  storage::ScanSpec spec;
  spec.job = job_;
  spec.table = table;
  spec.columns = std::move(columns);
  spec.from_step = from;
  spec.to_step = to == UINT64_MAX ? to : to + 1;
  spec.ranks = ranks;
  spec.batch_rows = 8192;
  return spec;
}

Status JobReader::scan(storage::Table table, std::vector<std::string> columns, uint64_t from, uint64_t to, const std::vector<uint32_t>& ranks,
                       const std::function<void(const storage::ColumnBatch&)>& each) const {
  storage::ScanSpec spec = specFor(table, std::move(columns), from, to, ranks);
  spec.threads = defaultWorkerThreads();
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

Status JobReader::scanSplit(storage::Table table, std::vector<std::string> columns, uint64_t from, uint64_t to, const std::vector<uint32_t>& ranks,
                            const std::function<void(size_t part, const storage::ColumnBatch&)>& each) const {
  storage::ScanSpec spec = specFor(table, std::move(columns), from, to, ranks);
  spec.contiguous_parts = true;  // a run of ranks per part: each rank's rows in one part
  Result<std::unique_ptr<storage::ScanParts>> split = store_.scanParts(spec, parts());
  if (!split.isOk()) return split.status();
  storage::ScanParts& all = **split;
  std::vector<Status> failed(all.size());
  // check_() throws when the query is cancelled; runOnThreads rethrows it once all returned.
  runOnThreads(all.size(), [&](size_t p) {
    storage::ScanPart& part = all.part(p);
    storage::ColumnBatch batch;
    while (failed[p].isOk() && part.nextStripe()) {
      for (;;) {
        check_();
        bool has_rows = false;
        failed[p] = part.next(&batch, &has_rows);
        if (!failed[p].isOk() || !has_rows) break;
        each(p, batch);
      }
    }
  });
  for (const Status& s : failed) ARGUS_RETURN_IF_ERROR(s);
  return Status::ok();
}

Result<std::vector<StepPoint>> JobReader::stepSeries(const std::string& column, uint64_t from, uint64_t to, std::optional<uint32_t> rank) const {
  Result<std::vector<std::vector<StepPoint>>> series = stepSeries(std::vector<std::string>{column}, from, to, rank ? std::vector<uint32_t>{*rank} : std::vector<uint32_t>{});
  if (!series.isOk()) return series.status();
  return std::move(series->front());
}

namespace {

// A step series being read: per step, each metric's max over ranks, the earliest start and
// the latest end (when read), and the ranks seen. In an array over the range when it is
// short; else by step number (a job whose steps start far from the range's start: after a
// restart at step 10^8).
class SeriesSums {
 public:
  static constexpr uint64_t kDenseSteps = uint64_t{1} << 22;

  SeriesSums(uint64_t from, uint64_t steps, size_t metrics, bool times)
      : from_(from), k_(metrics), times_(times), dense_(steps <= kDenseSteps ? steps : 0), dense_values_(dense_.size() * metrics) {}

  // Rows of b: columns[0] the step, [1] start_ns and [2] end_ns if times, at[c] metric c.
  void add(const storage::ColumnBatch& b, const std::vector<size_t>& at) {
    const auto& steps = b.columns[0].ints;
    for (size_t i = 0; i < b.rows; ++i) {
      auto [p, values] = point(static_cast<uint64_t>(steps[i]));
      const int64_t start = times_ ? b.columns[1].ints[i] : 0, end = times_ ? b.columns[2].ints[i] : 0;
      for (size_t c = 0; c < k_; ++c) {
        const double v = static_cast<double>(b.columns[at[c]].ints[i]);
        values[c] = p->ranks == 0 ? v : std::max(values[c], v);
      }
      p->start_ns = p->ranks == 0 ? start : std::min(p->start_ns, start);
      p->end_ns = p->ranks == 0 ? end : std::max(p->end_ns, end);
      ++p->ranks;
    }
  }
  // Another part's sums of the same range, into these.
  void merge(const SeriesSums& o) {
    o.forEach([&](uint64_t step, const StepPoint& q, const double* qv) {
      auto [p, values] = point(step);
      for (size_t c = 0; c < k_; ++c) values[c] = p->ranks == 0 ? qv[c] : std::max(values[c], qv[c]);
      p->start_ns = p->ranks == 0 ? q.start_ns : std::min(p->start_ns, q.start_ns);
      p->end_ns = p->ranks == 0 ? q.end_ns : std::max(p->end_ns, q.end_ns);
      p->ranks += q.ranks;
      p->expected = p->expected || q.expected;
    });
  }
  void expect(uint64_t step) { point(step).first->expected = true; }
  // Each step with rows, in order: f(step, point, values).
  template <typename F>
  void forEach(F&& f) const {
    for (uint64_t i = 0; i < dense_.size(); ++i) {
      if (dense_[i].ranks > 0) f(from_ + i, dense_[i], &dense_values_[i * k_]);
    }
    for (const auto& [step, q] : sparse_) {
      if (q.p.ranks > 0) f(step, q.p, q.values.data());
    }
  }
  size_t bytes() const {
    return dense_.capacity() * sizeof(StepPoint) * (k_ + 1) + dense_values_.capacity() * sizeof(double) +
           sparse_.size() * (sizeof(Point) + k_ * (8 + sizeof(StepPoint)) + 48);
  }

 private:
  struct Point {
    StepPoint p;
    std::vector<double> values;
  };
  std::pair<StepPoint*, double*> point(uint64_t step) {
    if (!dense_.empty()) return {&dense_[step - from_], &dense_values_[(step - from_) * k_]};
    Point& q = sparse_[step];
    q.values.resize(k_);
    return {&q.p, q.values.data()};
  }

  uint64_t from_;
  size_t k_;
  bool times_;
  std::vector<StepPoint> dense_;
  std::vector<double> dense_values_;
  std::map<uint64_t, Point> sparse_;
};

}  // namespace

Result<std::vector<std::vector<StepPoint>>> JobReader::stepSeries(const std::vector<std::string>& metrics, uint64_t from, uint64_t to,
                                                                 const std::vector<uint32_t>& ranks, Times times) const {
  for (const std::string& m : metrics) {
    if (storage::findColumn(storage::Table::kSteps, m) == nullptr) return Status::invalidArgument("no column '" + m + "' in table steps");
  }
  std::vector<std::vector<StepPoint>> out(metrics.size());
  if (to < from || metrics.empty()) return out;
  const size_t k = metrics.size();
  const uint64_t n = to - from + 1;
  const bool with_times = times == Times::kRead;
  std::vector<std::string> columns = {"step"};
  if (with_times) columns.insert(columns.end(), {"start_ns", "end_ns"});
  std::vector<size_t> at;  // each metric's column (start_ns and end_ns are read once)
  for (const std::string& m : metrics) {
    auto it = std::find(columns.begin(), columns.end(), m);
    at.push_back(static_cast<size_t>(it - columns.begin()));
    if (it == columns.end()) columns.push_back(m);
  }
  // Many ranks' rows: summed per part on the scan's threads, then merged, when a part's
  // array is small (a few MB); else on the reader alone, into one.
  constexpr uint64_t kSplitSteps = uint64_t{1} << 16;
  std::vector<SeriesSums> sums;
  if (ranks.size() != 1 && n <= kSplitSteps) {
    for (size_t p = 0; p < parts(); ++p) sums.emplace_back(from, n, k, with_times);
    hold_(sums.size() * sums[0].bytes());
    ARGUS_RETURN_IF_ERROR(scanSplit(storage::Table::kSteps, columns, from, to, ranks, [&](size_t part, const storage::ColumnBatch& b) { sums[part].add(b, at); }));
    for (size_t p = 1; p < sums.size(); ++p) sums[0].merge(sums[p]);
    sums.erase(sums.begin() + 1, sums.end());
  } else {
    sums.emplace_back(from, n, k, with_times);
    ARGUS_RETURN_IF_ERROR(scan(storage::Table::kSteps, columns, from, to, ranks, [&](const storage::ColumnBatch& b) { sums[0].add(b, at); }));
  }
  SeriesSums& all = sums[0];
  hold_(all.bytes());
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
          all.expect(static_cast<uint64_t>(b.columns[0].ints[i]));
        }
      }
    }));
  }
  // (A step an event names but no steps row has is left out: it has no values.)
  all.forEach([&](uint64_t step, StepPoint p, const double* values) {
    p.step = step;
    for (size_t c = 0; c < k; ++c) {
      p.value = values[c];
      out[c].push_back(p);
    }
  });
  return out;
}

namespace {

// Runs of windows whose steps lie close, each read by one scan over [from, to]. A gap of a
// chunk's steps (256 by default) or more is skipped rather than decoded; a run of at most
// kRunWindows keeps the per-row loop over its windows short.
struct WindowRun {
  uint64_t from = 0, to = 0;
  std::vector<size_t> windows;
};
std::vector<WindowRun> windowRuns(const std::vector<StepWindow>& windows) {
  constexpr uint64_t kJoinSteps = 256;
  constexpr size_t kRunWindows = 16;
  std::vector<size_t> order(windows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return firstStepOf(windows[x]) < firstStepOf(windows[y]); });
  std::vector<WindowRun> runs;
  for (size_t w : order) {
    if (runs.empty() || runs.back().windows.size() == kRunWindows || firstStepOf(windows[w]) > runs.back().to + kJoinSteps) {
      runs.push_back(WindowRun{firstStepOf(windows[w]), windows[w].to_step, {}});
    }
    runs.back().to = std::max(runs.back().to, windows[w].to_step);
    runs.back().windows.push_back(w);
  }
  return runs;
}

}  // namespace

template <typename EachRow, typename AfterPart>
Status JobReader::scanWindows(storage::Table table, const std::vector<std::string>& columns, const std::vector<StepWindow>& windows,
                              const std::vector<uint32_t>& ranks, EachRow&& each, AfterPart&& after) const {
  for (const WindowRun& run : windowRuns(windows)) {
    ARGUS_RETURN_IF_ERROR(scanSplit(table, columns, run.from, run.to, ranks, [&](size_t part, const storage::ColumnBatch& b) {
      const auto& steps = b.columns[0].ints;
      for (size_t i = 0; i < b.rows; ++i) {
        const auto step = static_cast<uint64_t>(steps[i]);
        for (size_t w : run.windows) {
          const int side = sideOf(windows[w], step);
          if (side >= 0) each(part, b, i, w, side);
        }
      }
    }));
    for (size_t part = 0; part < parts(); ++part) after(part);
  }
  return Status::ok();
}

Result<std::vector<RankPhasesPair>> JobReader::rankPhases(const std::vector<StepWindow>& windows, uint32_t rank_count,
                                                          const std::vector<bool>& detailed) const {
  if (recent_ != nullptr) {
    std::optional<std::vector<RankPhasesPair>> held = recent_->rankPhases(windows, rank_count, detailed, recent_ranks_);
    if (held) {
      hold_(2 * windows.size() * rank_count * sizeof(RankPhases));
      return std::move(held).value();
    }
  }
  std::vector<RankPhasesPair> out = absentRankPhases(windows.size(), rank_count);
  // `columns` of `ranks` (empty: all) into out: one scan, each part gathering the rank its
  // rows are of (a part's rows come in (rank, step) order, each rank in one part).
  auto read = [&](const std::vector<uint32_t>& ranks, int columns) -> Status {
    std::vector<std::string> names = {"step", "rank"};
    names.insert(names.end(), model::kSummaryColumnNames.begin(), model::kSummaryColumnNames.begin() + columns);
    struct PartState {
      explicit PartState(size_t windows) : values(windows) {}
      RankPhasesGatherer values;
      int64_t current = -1;
    };
    std::vector<PartState> states(parts(), PartState(windows.size()));
    auto finish = [&](PartState& st) {
      if (st.current >= 0 && st.current < static_cast<int64_t>(rank_count)) st.values.finish(static_cast<uint32_t>(st.current), out);
      st.current = -1;
    };
    return scanWindows(
        storage::Table::kSteps, names, windows, ranks,
        [&](size_t part, const storage::ColumnBatch& b, size_t i, size_t w, int side) {
          PartState& st = states[part];
          if (b.columns[1].ints[i] != st.current) {
            finish(st);
            st.current = b.columns[1].ints[i];
          }
          int64_t row[RankPhasesGatherer::kColumns];
          for (int c = 0; c < columns; ++c) row[c] = b.columns[c + 2].ints[i];
          st.values.add(w, side, row, columns);
        },
        [&](size_t part) { finish(states[part]); });
  };
  // Every rank's compute, exposed, bubble and transfer; then all six columns of the few
  // detailed ranks, read again on their own: iter and idle of every rank would be half as
  // much again to decode.
  ARGUS_RETURN_IF_ERROR(read({}, RankPhasesGatherer::kCoreColumns));
  std::vector<uint32_t> detailed_ranks;
  for (uint32_t r = 0; r < detailed.size() && r < rank_count; ++r) {
    if (detailed[r]) detailed_ranks.push_back(r);
  }
  if (!detailed_ranks.empty()) ARGUS_RETURN_IF_ERROR(read(detailed_ranks, RankPhasesGatherer::kColumns));
  hold_(2 * windows.size() * rank_count * sizeof(RankPhases));
  return out;
}

const CollectiveSums* RankTraffic::find(const CollectiveKey& key) const {
  for (const Entry& e : entries_) {
    if (e.first == key) return &e.second;
  }
  return nullptr;
}

CollectiveSums& RankTraffic::operator[](const CollectiveKey& key) {
  for (Entry& e : entries_) {
    if (e.first == key) return e.second;
  }
  return entries_.emplace_back(key, CollectiveSums{}).second;
}

Result<std::vector<JobReader::CollectivesPair>> JobReader::collectives(const std::vector<StepWindow>& windows, uint32_t rank_count,
                                                                       const std::vector<uint32_t>& ranks) const {
  std::vector<CollectivesPair> out(windows.size());
  for (CollectivesPair& pair : out) {
    pair[0].resize(rank_count);
    pair[1].resize(rank_count);
  }
  if (ranks.empty()) return out;  // (an empty rank list would scan them all)
  ARGUS_RETURN_IF_ERROR(scanWindows(
      storage::Table::kCollectives, {"step", "rank", "op", "communicator", "peer_rank", "bytes", "total_ns", "wait_ns"}, windows, ranks,
      [&](size_t part, const storage::ColumnBatch& b, size_t i, size_t w, int side) {
        const auto rank = static_cast<uint64_t>(b.columns[1].ints[i]);
        if (rank >= rank_count) return;
        CollectiveKey key{static_cast<uint8_t>(b.columns[2].ints[i]), static_cast<uint64_t>(b.columns[3].ints[i]),
                          static_cast<uint32_t>(b.columns[4].ints[i])};
        CollectiveSums& s = out[w][side][rank][key];
        const int64_t total = b.columns[6].ints[i], wait = std::max<int64_t>(0, b.columns[7].ints[i]);
        s.bytes += static_cast<uint64_t>(b.columns[5].ints[i]);
        s.transfer_ns += static_cast<double>(std::max<int64_t>(0, total - wait));
        s.wait_ns += static_cast<double>(wait);
      },
      [](size_t) {}));
  size_t entries = 0;
  for (const CollectivesPair& pair : out) {
    for (const std::vector<RankTraffic>& side : pair) {
      for (const RankTraffic& traffic : side) entries += traffic.size();
    }
  }
  hold_(2 * windows.size() * rank_count * sizeof(RankTraffic) + entries * sizeof(RankTraffic::Entry));
  return out;
}

Result<std::vector<JobReader::Event>> JobReader::events(const std::vector<uint8_t>& kinds, uint64_t from, uint64_t to) const {
  auto wanted = [&](int64_t kind) { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); };
  // The ranks with such events: from recent steps, else from a scan of the kinds alone (most
  // ranks have none, and the values are as much again to decode).
  std::optional<std::vector<uint32_t>> ranks;
  if (recent_ != nullptr) ranks = recent_->ranksWithEvents(kinds, from, to, recent_ranks_);
  if (!ranks) {
    std::vector<std::vector<uint32_t>> with(parts());  // per part: its run of ranks, in order
    ARGUS_RETURN_IF_ERROR(scanSplit(storage::Table::kEvents, {"rank", "kind"}, from, to, {}, [&](size_t part, const storage::ColumnBatch& b) {
      for (size_t i = 0; i < b.rows; ++i) {
        const auto rank = static_cast<uint32_t>(b.columns[0].ints[i]);
        if (wanted(b.columns[1].ints[i]) && (with[part].empty() || with[part].back() != rank)) with[part].push_back(rank);
      }
    }));
    ranks.emplace();
    for (const std::vector<uint32_t>& part : with) ranks->insert(ranks->end(), part.begin(), part.end());
  }
  if (ranks->empty()) return std::vector<Event>{};  // (an empty rank list would scan them all)
  std::vector<std::vector<Event>> found(parts());  // per part: its run of ranks, in order
  ARGUS_RETURN_IF_ERROR(scanSplit(storage::Table::kEvents, {"rank", "step", "kind", "value"}, from, to, *ranks, [&](size_t part, const storage::ColumnBatch& b) {
    for (size_t i = 0; i < b.rows; ++i) {
      if (!wanted(b.columns[2].ints[i])) continue;
      const auto kind = static_cast<uint8_t>(b.columns[2].ints[i]);
      found[part].push_back(Event{static_cast<uint32_t>(b.columns[0].ints[i]), static_cast<uint64_t>(b.columns[1].ints[i]), kind,
                                  static_cast<uint64_t>(b.columns[3].ints[i])});
    }
  }));
  std::vector<Event> out;
  for (const std::vector<Event>& events : found) out.insert(out.end(), events.begin(), events.end());
  hold_(out.capacity() * sizeof(Event));
  return out;
}

Result<std::vector<std::pair<uint64_t, uint64_t>>> JobReader::stackSamples(uint64_t from, uint64_t to, uint32_t rank_count, const std::vector<uint32_t>& ranks,
                                                                           const std::function<bool(uint64_t)>& in) const {
  std::vector<std::pair<uint64_t, uint64_t>> out(rank_count);  // each rank's written by one part
  if (ranks.empty()) return out;  // (an empty rank list would scan them all)
  ARGUS_RETURN_IF_ERROR(scanSplit(storage::Table::kStacks, {"rank", "stack_id", "samples"}, from, to, ranks, [&](size_t, const storage::ColumnBatch& b) {
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

Result<std::vector<std::vector<JobReader::KernelTime>>> JobReader::computeKernelTimes(uint64_t from, uint64_t to, uint32_t rank_count) const {
  std::vector<std::vector<KernelTime>> out(rank_count);  // each rank's written by one part
  ARGUS_RETURN_IF_ERROR(scanSplit(storage::Table::kKernels, {"rank", "signature", "count", "total_ns", "phase"}, from, to, {},
                                  [&](size_t, const storage::ColumnBatch& b) {
    for (size_t i = 0; i < b.rows; ++i) {
      const auto rank = static_cast<uint64_t>(b.columns[0].ints[i]);
      if (rank >= rank_count || b.columns[4].ints[i] == static_cast<int64_t>(model::Phase::kCommunication)) continue;
      const auto sig = static_cast<uint64_t>(b.columns[1].ints[i]);
      std::vector<KernelTime>& mine = out[rank];
      auto it = std::find_if(mine.begin(), mine.end(), [&](const KernelTime& k) { return k.signature == sig; });
      if (it == mine.end()) it = mine.insert(mine.end(), KernelTime{sig, 0, 0});
      it->count += static_cast<uint64_t>(b.columns[2].ints[i]);
      it->total_ns += b.columns[3].ints[i];
    }
  }));
  size_t entries = 0;
  for (const std::vector<KernelTime>& mine : out) entries += mine.size();
  hold_(rank_count * sizeof(out[0]) + entries * sizeof(KernelTime));
  return out;
}

Result<std::map<uint32_t, std::map<uint64_t, KernelSums>>> JobReader::kernels(const std::vector<uint32_t>& ranks, uint64_t from, uint64_t to) const {
  std::map<uint32_t, std::map<uint64_t, KernelSums>> out;
  if (ranks.empty()) return out;
  ARGUS_RETURN_IF_ERROR(scan(storage::Table::kKernels, {"rank", "signature", "count", "total_ns", "hist", "phase"}, from, to, ranks, [&](const storage::ColumnBatch& b) {
    for (size_t i = 0; i < b.rows; ++i) {
      KernelSums& k = out[static_cast<uint32_t>(b.columns[0].ints[i])][static_cast<uint64_t>(b.columns[1].ints[i])];
      k.phase = static_cast<model::Phase>(b.columns[5].ints[i]);
      k.count += static_cast<uint64_t>(b.columns[2].ints[i]);
      k.total_ns += b.columns[3].ints[i];
      ++k.steps;
      k.hist.merge(b.columns[4].hists[i]);
    }
  }));
  return out;
}

}  // namespace argus::diagnose
