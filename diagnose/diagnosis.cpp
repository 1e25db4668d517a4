#include "diagnose/diagnosis.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace argus::diagnose {

namespace {

std::vector<AnomalyWindow> detect(const std::vector<StepPoint>& series, const DetectorOptions& options) {
  ChangeDetector detector(options);
  for (const StepPoint& p : series) detector.add(p.step, p.value, p.expected);
  return detector.windows();
}

}  // namespace

Result<std::vector<AnomalyWindow>> findAnomalyWindows(const JobReader& reader, uint64_t from, uint64_t to, const std::string& metric,
                                                      std::optional<uint32_t> rank, const DetectorOptions& options, std::vector<StepPoint>* series_out) {
  ARGUS_RETURN_IF_ERROR(reader.exists());
  Result<std::vector<StepPoint>> series = reader.stepSeries(metric, from, to, rank);
  if (!series.isOk()) return series.status();
  std::vector<AnomalyWindow> windows = detect(*series, options);
  if (series_out != nullptr) *series_out = std::move(series).value();
  return windows;
}

std::vector<AnomalyWindow> mergeWindows(std::vector<AnomalyWindow> windows) {
  std::sort(windows.begin(), windows.end(), [](const AnomalyWindow& a, const AnomalyWindow& b) { return a.from_step < b.from_step; });
  std::vector<AnomalyWindow> out;
  for (const AnomalyWindow& w : windows) {
    if (!out.empty() && w.from_step <= out.back().to_step + 1) {
      AnomalyWindow& m = out.back();
      if (w.to_step > m.to_step) m.to_step = w.to_step;
      m.open = m.open || w.open;
      continue;
    }
    out.push_back(w);
  }
  return out;
}

std::optional<StepWindow> baselineFor(uint64_t from_step, uint64_t to_step, uint64_t first_step, uint32_t steps, uint64_t warmup,
                                      const std::vector<AnomalyWindow>& windows) {
  if (from_step <= first_step || steps == 0) return std::nullopt;
  StepWindow w;
  w.from_step = from_step;
  w.to_step = to_step;
  w.base_to = from_step - 1;
  w.base_from = from_step - std::min<uint64_t>(steps, from_step - first_step);
  // Warm-up steps run slower: a baseline of them hides a slowdown.
  if (w.base_from < first_step + warmup && w.base_to >= first_step + warmup + 5) w.base_from = first_step + warmup;
  // After the latest earlier window that ends inside the baseline, if 5 steps remain.
  for (const AnomalyWindow& e : windows) {
    if (e.to_step < from_step && e.to_step >= w.base_from && w.base_to - e.to_step >= 5) w.base_from = e.to_step + 1;
  }
  return w;
}

namespace {

// Each finding's wall clock, for timelines (Grafana annotations): its first step's earliest
// start and its last step's latest end over the ranks of the first data-parallel replica
// (every stage and shard of the model; the other replicas keep in step with it through
// their gradient all-reduce), over every rank where it lacks a step. At 10,240 ranks, every
// rank's start_ns and end_ns would be two more columns of every row for stage 1 to read.
Status setWallClock(const JobReader& reader, const std::vector<model::RankTopology>& topology, std::vector<Finding>& findings) {
  if (findings.empty()) return Status::ok();
  uint64_t from = UINT64_MAX, to = 0;
  for (const Finding& f : findings) {
    from = std::min(from, f.from_step);
    to = std::max(to, f.to_step);
  }
  std::vector<uint32_t> replica;
  for (const model::RankTopology& t : topology) {
    if (t.dp_rank == 0) replica.push_back(t.rank);
  }
  std::sort(replica.begin(), replica.end());
  std::vector<std::array<bool, 2>> set(findings.size());  // from_ns, to_ns
  for (const std::vector<uint32_t>& ranks : {replica, std::vector<uint32_t>{}}) {
    Result<std::vector<std::vector<StepPoint>>> times = reader.stepSeries({"iter_ns"}, from, to, ranks);
    if (!times.isOk()) return times.status();
    const std::vector<StepPoint>& series = times->front();
    auto at = [&](uint64_t step) {
      auto it = std::lower_bound(series.begin(), series.end(), step, [](const StepPoint& p, uint64_t s) { return p.step < s; });
      return it != series.end() && it->step == step ? &*it : nullptr;
    };
    bool missing = false;
    for (size_t i = 0; i < findings.size(); ++i) {
      Finding& f = findings[i];
      const StepPoint* first = set[i][0] ? nullptr : at(f.from_step);
      const StepPoint* last = set[i][1] ? nullptr : at(f.to_step);
      if (first != nullptr) f.from_ns = first->start_ns;
      if (last != nullptr) f.to_ns = last->end_ns;
      set[i] = {set[i][0] || first != nullptr, set[i][1] || last != nullptr};
      missing = missing || !set[i][0] || !set[i][1];
    }
    if (!missing || ranks.empty()) break;
  }
  return Status::ok();
}

// Stage 3 over one window's stage-2 findings `found` (`w`: the window and its baseline),
// and `unexplained` when nothing was found.
Status explainWindow(const JobReader& reader, const std::vector<model::RankTopology>& topology, const AnomalyWindow& aw, const StepWindow& w,
                     const DiagnoseOptions& o, std::vector<Finding>& found) {
  // Stage 3 for each straggler: its top kernels into the evidence, and a kernel of its
  // own when the slowdown sits in it rather than in all of the rank's compute.
  const size_t stage2 = found.size();
  for (size_t i = 0; i < stage2; ++i) {
    if (found[i].kind != FindingKind::kComputeStraggler && found[i].kind != FindingKind::kMaskedStraggler) continue;
    Result<std::vector<KernelChange>> kernels = analyzeKernels(reader, topology, found[i].ranks[0], w);
    if (!kernels.isOk()) return kernels.status();
    std::string top;
    for (size_t k = 0; k < kernels->size() && k < 3 && (*kernels)[k].share >= 0.01; ++k) {
      const KernelChange& c = (*kernels)[k];
      char b[96];
      std::snprintf(b, sizeof b, " (%+.0f%%, %.0f%% of the time lost)", c.slowdown * 100, c.share * 100);
      top += (k == 0 ? "" : "; ") + shortKernelName(c.name) + b;
    }
    if (!top.empty()) found[i].evidence += "; its kernels that lost the most: " + top;
    if (!kernels->empty()) {
      // Against the rank's other kernels: when all slowed alike (a throttled GPU), no one
      // kernel is to blame.
      const KernelChange& c = kernels->front();
      std::vector<double> others;
      for (size_t k = 1; k < kernels->size(); ++k) {
        if (!(*kernels)[k].is_new) others.push_back((*kernels)[k].slowdown);
      }
      double typical = 0;
      if (!others.empty()) {
        std::nth_element(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(others.size() / 2), others.end());
        typical = std::max(0.0, others[others.size() / 2]);
      }
      if (!c.is_new && c.share >= o.kernel_share && c.slowdown >= o.kernel_concentration * typical && c.slowdown - typical >= o.window.compute_excess) {
        Finding f;
        f.kind = FindingKind::kDegradedKernel;
        f.from_step = aw.from_step;
        f.to_step = aw.to_step;
        f.ranks = found[i].ranks;
        f.pp_rank = found[i].pp_rank;
        f.kernel = c.name;
        f.slowdown = c.slowdown;
        f.confidence = std::min(0.99, 0.5 + c.share / 2);
        char b[192];
        std::snprintf(b, sizeof b, ": %.1f us per call against %.1f us %s (p99 %.1f us against %.1f us), %.0f%% of the time rank %u lost", c.p50_ns / 1e3,
                      c.baseline_p50_ns / 1e3, w.peers_only ? "on its median stage peer" : "before", c.p99_ns / 1e3, c.baseline_p99_ns / 1e3, c.share * 100,
                      f.ranks[0]);
        f.evidence = shortKernelName(c.name) + b;
        found.push_back(std::move(f));
      }
    }
  }
  if (found.empty()) {
    Finding f;
    f.kind = FindingKind::kUnexplained;
    f.from_step = aw.from_step;
    f.to_step = aw.to_step;
    f.slowdown = aw.slowdown;
    f.confidence = aw.confidence();
    char b[200];
    std::snprintf(b, sizeof b, "the job's step time is %+.0f%% over its baseline (%.1f ms) for steps %llu-%llu; no rank, stage, link or stall stands out%s",
                  aw.slowdown * 100, aw.baseline / 1e6, static_cast<unsigned long long>(aw.from_step), static_cast<unsigned long long>(aw.to_step),
                  w.peers_only ? " among peers (no steps before it to compare with)" : "");
    f.evidence = b;
    found.push_back(std::move(f));
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<std::vector<Finding>>> diagnoseWindows(const JobReader& reader, const std::vector<model::RankTopology>& topology,
                                                          const std::vector<AnomalyWindow>& which, uint64_t first_step,
                                                          const std::vector<AnomalyWindow>& windows, const DiagnoseOptions& o) {
  // A window with no steps before it is compared with peers alone.
  std::vector<StepWindow> steps;
  for (const AnomalyWindow& aw : which) {
    std::optional<StepWindow> w = baselineFor(aw.from_step, aw.to_step, first_step, o.baseline_steps, o.detector.warmup_steps, windows);
    steps.push_back(w.value_or(StepWindow{aw.from_step, aw.to_step, 0, 0, true}));
  }
  Result<std::vector<std::vector<Finding>>> out = analyzeWindows(reader, topology, steps, o.window);
  if (!out.isOk()) return out.status();
  for (size_t i = 0; i < which.size(); ++i) ARGUS_RETURN_IF_ERROR(explainWindow(reader, topology, which[i], steps[i], o, (*out)[i]));
  return out;
}

Result<std::vector<Finding>> diagnoseWindow(const JobReader& reader, const std::vector<model::RankTopology>& topology, const AnomalyWindow& aw,
                                            uint64_t first_step, const std::vector<AnomalyWindow>& windows, const DiagnoseOptions& o) {
  Result<std::vector<std::vector<Finding>>> found = diagnoseWindows(reader, topology, {aw}, first_step, windows, o);
  if (!found.isOk()) return found.status();
  return std::move(found->front());
}

Result<std::vector<Finding>> diagnose(const JobReader& reader, uint64_t from, uint64_t to, const DiagnoseOptions& o) {
  ARGUS_RETURN_IF_ERROR(reader.exists());
  // The step time, the slowest rank's compute and its collectives' transfer time: a slow GPU
  // or stage the pipeline's slack hides from the step time (a first stage has idle time to
  // absorb it), or a slow link under communication that compute overlaps, is still degraded
  // hardware. One scan reads all three, not their start and end (setWallClock).
  Result<std::vector<std::vector<StepPoint>>> read = reader.stepSeries(kDetectedSeries, from, to, {}, JobReader::Times::kSkip);
  if (!read.isOk()) return read.status();
  const std::vector<StepPoint>& series = (*read)[0];
  std::vector<AnomalyWindow> windows;
  for (const std::vector<StepPoint>& s : *read) {
    const std::vector<AnomalyWindow> found = detect(s, o.detector);
    windows.insert(windows.end(), found.begin(), found.end());
  }
  windows = mergeWindows(std::move(windows));
  Result<std::vector<model::RankTopology>> topology = reader.topology();
  if (!topology.isOk()) return topology.status();
  // A capture too short for stage 1 to judge any step (a profiler trace of a few steps):
  // all of it is one window, its ranks compared with their peers; with nothing standing
  // out there is nothing to report (no anomaly was claimed).
  const DetectorOptions& d = o.detector;
  const bool short_capture = !series.empty() && series.size() < d.warmup_steps + d.min_baseline + d.min_steps;
  if (short_capture) {
    AnomalyWindow all;
    all.from_step = series.front().step;
    all.to_step = series.back().step;
    windows = {all};
  }
  const uint64_t first_step = series.empty() ? from : series.front().step;
  Result<std::vector<std::vector<Finding>>> found = diagnoseWindows(reader, *topology, windows, first_step, windows, o);
  if (!found.isOk()) return found.status();
  if (short_capture) {
    auto& f = found->front();
    f.erase(std::remove_if(f.begin(), f.end(), [](const Finding& x) { return x.kind == FindingKind::kUnexplained; }), f.end());
  }
  std::vector<Finding> out;
  for (std::vector<Finding>& window : *found) out.insert(out.end(), window.begin(), window.end());
  ARGUS_RETURN_IF_ERROR(setWallClock(reader, *topology, out));
  return out;
}

}  // namespace argus::diagnose
