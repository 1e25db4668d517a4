#include "diagnose/monitor.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "base/prometheus.h"
#include "diagnose/recent_steps.h"

namespace argus::diagnose {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kReanalyzeSteps = 16;  // an open window's findings again every this many steps
constexpr uint64_t kLateSteps = 64;       // how far the job runs ahead before a step is fed incomplete
constexpr uint64_t kPendingSteps = 16;    // steps of every rank's summaries kept for the next pass
// kDetectedSeries in a StepSummary.
constexpr std::array<model::SummaryColumn, 3> kDetectedColumns = {model::SummaryColumn::kIter, model::SummaryColumn::kCompute,
                                                                  model::SummaryColumn::kTransfer};

// What makes a finding the same one seen before: its kind, onset and place. A link's ranks
// are evidence, not its place: more steps may show more of them.
std::string keyOf(const Finding& f) {
  return std::string(findingKindName(f.kind)) + "|" + std::to_string(f.from_step) + "|" + (f.link.empty() ? rankList(f.ranks) : "") + "|" +
         (f.pp_rank ? std::to_string(*f.pp_rank) : "") + "|" + f.link + "|" + f.kernel;
}

}  // namespace

struct DiagnosisMonitor::JobState {
  JobState(const DetectorOptions& d, uint32_t recent_steps) : detectors(kDetectedSeries.size(), ChangeDetector(d)), recent(recent_steps) {}
  std::vector<ChangeDetector> detectors;  // one per kDetectedSeries
  RecentSteps recent;
  std::optional<Clock::time_point> last_told;  // when `recent` last took summaries; none: it holds none
  std::vector<model::StepSummary> taken;  // the notices' last pending summaries
  bool started = false;
  std::optional<uint32_t> ranks;  // in its topology, once a pass has read it
  uint64_t first_step = 0, next_step = 0;
  std::map<uint64_t, uint64_t> analyzed;  // window from_step: its to_step when last analyzed
  std::set<std::string> known;
  struct FedStep {
    Clock::time_point at;      // when it was fed
    int64_t start_ns, end_ns;  // its earliest start and latest end
  };
  std::map<uint64_t, FedStep> fed;  // steps a window may still need
  std::unordered_map<uint64_t, bool> spike_names;  // marker name id: announces a spike (expectedSpike)
  std::string last_error;  // of the last pass, "" when it went well
  std::vector<uint32_t> silent;  // ranks silent at the last pass (SilentRanks), sorted
  uint32_t silent_never = 0;
};

DiagnosisMonitor::DiagnosisMonitor(storage::Store& store, MonitorOptions options, Callback on_finding)
    : store_(store), o_(std::move(options)), on_finding_(std::move(on_finding)) {}

DiagnosisMonitor::~DiagnosisMonitor() { stop(); }

void DiagnosisMonitor::start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      pass_due_ = false;  // a step completed while the pass runs sets it again
      lock.unlock();
      pass();
      lock.lock();
      wake_.wait_for(lock, o_.interval, [this] { return stopping_ || pass_due_; });
    }
  });
}

void DiagnosisMonitor::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DiagnosisMonitor::noteDurable(storage::JobId job, std::span<const model::StepSummary> records) {
  std::lock_guard lock(mu_);
  Progress& p = progress_[job];
  for (const model::StepSummary& r : records) noteRecord(p, r);
}

void DiagnosisMonitor::noteRecord(Progress& p, const model::StepSummary& r) {
  const uint64_t step = r.step;
  if (p.pending.size() >= kPendingSteps * std::max<uint32_t>(p.ranks, 256)) {  // the pass is far behind
    for (const model::StepSummary& dropped : p.pending) p.lost_through = std::max(p.lost_through.value_or(0), dropped.step);
    p.pending.clear();
  }
  p.pending.push_back(r);
  const auto now = Clock::now();
  if (!p.first_step) p.first_when = now;
  if (!p.first_step || step < *p.first_step) p.first_step = step;
  if (!p.newest_step || step > *p.newest_step) {
    p.arrived[step] = now;
    p.newest_step = step;
    // Steps further back than any pass feeds (a monitor far behind): forgotten.
    while (p.arrived.begin()->first + o_.max_history < step) p.arrived.erase(p.arrived.begin());
    while (!p.sums.empty() && p.sums.begin()->first + o_.max_history < step) p.sums.erase(p.sums.begin());
  }
  auto [it, added] = p.newest.try_emplace(r.rank, Progress::Rank{step, *p.newest_step, now});
  bool counted = false;  // the rank had reached the awaited step already
  if (!added) {
    if (step <= it->second.newest) return;  // a re-sent or restarted attempt's step: no progress
    counted = it->second.newest >= p.awaited;
    it->second = {step, *p.newest_step, now};
  }
  if (step < p.awaited) return;
  StepSums& sums = p.sums[step];
  for (size_t c = 0; c < sums.max.size(); ++c) {
    const int64_t v = r.value(kDetectedColumns[c]);
    sums.max[c] = sums.ranks == 0 ? v : std::max(sums.max[c], v);
  }
  sums.start_ns = sums.ranks == 0 ? r.start_ns : std::min(sums.start_ns, r.start_ns);
  sums.end_ns = sums.ranks == 0 ? r.end_ns : std::max(sums.end_ns, r.end_ns);
  ++sums.ranks;
  sums.markers.insert(sums.markers.end(), r.markers.begin(), r.markers.begin() + r.marker_count);
  if (counted) return;
  ++p.reached;
  // A job whose ranks no pass has read yet gets one at its first write; one without a
  // topology waits for the interval.
  if ((!p.known || (p.ranks > 0 && p.reached >= p.needed)) && !pass_due_) {
    pass_due_ = true;
    wake_.notify_all();
  }
}

DiagnosisMonitor::SilentRanks DiagnosisMonitor::silentRanks(const Progress& p) const {
  SilentRanks silent;
  if (!p.newest_step) return silent;
  const uint64_t newest = *p.newest_step;
  const auto quiet_since = Clock::now() - o_.silent_after;  // told of nothing after this
  for (const auto& [rank, r] : p.newest) {
    if (r.heard_at + kLateSteps <= newest && r.heard_when <= quiet_since) silent.newest.emplace_back(r.newest, rank);
  }
  std::sort(silent.newest.begin(), silent.newest.end());
  if (p.ranks > p.newest.size() && *p.first_step + kLateSteps <= newest && p.first_when <= quiet_since) {
    silent.never = p.ranks - static_cast<uint32_t>(p.newest.size());
  }
  return silent;
}

uint32_t DiagnosisMonitor::SilentRanks::expectedAt(uint32_t ranks, uint64_t step) const {
  const auto first_at = std::lower_bound(newest.begin(), newest.end(), std::pair<uint64_t, uint32_t>(step, 0));
  const size_t before = never + static_cast<size_t>(first_at - newest.begin());
  return before >= ranks ? 0 : ranks - static_cast<uint32_t>(before);
}

Result<std::vector<std::vector<StepPoint>>> DiagnosisMonitor::toldSeries(const storage::JobInfo& job, JobState& st, uint64_t from, uint32_t ranks,
                                                                         SilentRanks* silent) {
  std::vector<std::pair<uint64_t, StepSums>> told;
  {
    std::lock_guard lock(mu_);
    auto it = progress_.find(job.id);
    *silent = it == progress_.end() ? SilentRanks{} : silentRanks(it->second);
    if (it != progress_.end() && ranks > 0) {
      // From `from` on without a gap: a step between that no notice told of may be in the store.
      uint64_t want = from;
      for (auto s = it->second.sums.lower_bound(from);
           s != it->second.sums.end() && s->first == want && s->second.ranks >= silent->expectedAt(ranks, s->first); ++s, ++want) {
        told.emplace_back(s->first, s->second);
      }
    }
  }
  std::vector<std::vector<StepPoint>> out(kDetectedSeries.size());
  bool names_read = false;  // at most once a pass, however many unknown ids ranks send
  for (const auto& [step, sums] : told) {
    StepPoint p;
    p.step = step;
    p.ranks = sums.ranks;
    p.start_ns = sums.start_ns;
    p.end_ns = sums.end_ns;
    for (uint64_t name : sums.markers) {
      if (st.spike_names.count(name) == 0 && !names_read) {  // a name not seen yet: the job's names again
        Result<std::vector<model::StringDictEntry>> names = store_.names(job.name);
        if (!names.isOk()) return names.status();
        for (const model::StringDictEntry& e : *names) st.spike_names[e.id] = expectedSpike(e.text);
        names_read = true;
      }
      auto known = st.spike_names.find(name);  // not in the dictionary: no name, no spike
      p.expected = p.expected || (known != st.spike_names.end() && known->second);
    }
    for (size_t c = 0; c < out.size(); ++c) {
      p.value = static_cast<double>(sums.max[c]);
      out[c].push_back(p);
    }
  }
  return out;
}

std::optional<uint64_t> DiagnosisMonitor::newestDurable(storage::JobId job) const {
  std::lock_guard lock(mu_);
  auto it = progress_.find(job);
  return it == progress_.end() ? std::nullopt : it->second.newest_step;
}

void DiagnosisMonitor::takePending(storage::JobId job, JobState& st) {
  st.taken.clear();  // its capacity goes back to the notices: no allocation in steady state
  std::optional<uint64_t> lost;
  {
    std::lock_guard lock(mu_);
    auto it = progress_.find(job);
    if (it == progress_.end()) return;
    st.taken.swap(it->second.pending);
    lost = std::exchange(it->second.lost_through, std::nullopt);
  }
  if (lost) st.recent.forgetThrough(*lost);
  for (const model::StepSummary& s : st.taken) st.recent.add(s);
  if (!st.taken.empty()) st.last_told = Clock::now();
}

std::optional<Clock::time_point> DiagnosisMonitor::takeArrival(storage::JobId job, uint64_t step) {
  std::lock_guard lock(mu_);
  auto it = progress_.find(job);
  if (it == progress_.end()) return std::nullopt;
  std::map<uint64_t, Clock::time_point>& arrived = it->second.arrived;
  arrived.erase(arrived.begin(), arrived.lower_bound(step));
  if (arrived.empty()) return std::nullopt;
  return arrived.begin()->second;
}

void DiagnosisMonitor::awaitStep(const storage::JobInfo& job, std::optional<uint32_t> ranks, uint64_t step) {
  Progress& p = progress_[job.id];
  p.name = job.name;
  p.known = ranks.has_value();
  p.ranks = ranks.value_or(0);
  p.awaited = step;
  p.sums.erase(p.sums.begin(), p.sums.lower_bound(step));  // fed
  p.reached = 0;
  for (const auto& [rank, r] : p.newest) p.reached += r.newest >= step;
  const SilentRanks silent = silentRanks(p);
  p.needed = silent.expectedAt(p.ranks, step);
  p.silent = silent.never + static_cast<uint32_t>(silent.newest.size());
  if (p.ranks > 0 && p.reached >= p.needed) pass_due_ = true;
}

void DiagnosisMonitor::pass() {
  const auto t0 = Clock::now();
  const std::vector<storage::JobInfo> jobs = store_.listJobs();
  for (const storage::JobInfo& job : jobs) {
    auto& state = jobs_[job.id];
    if (!state) state = std::make_unique<JobState>(o_.diagnose.detector, o_.recent_steps);
    Status s = passJob(job, *state);
    {
      std::lock_guard lock(mu_);
      if (!s.isOk()) ++errors_;
      awaitStep(job, state->ranks, state->next_step);
    }
    // Once per change, not every pass: a damaged chunk would fail each one.
    std::string error = s.isOk() ? "" : s.toString();
    if (error != state->last_error && !error.empty()) std::fprintf(stderr, "argusd: diagnosis of job %s: %s\n", job.name.c_str(), error.c_str());
    state->last_error = std::move(error);
  }
  // Forget dropped jobs: their detectors, findings and progress. A job created since the
  // list was read (ids only grow) keeps the notices it has sent already.
  std::vector<storage::JobId> live;
  for (const storage::JobInfo& job : jobs) live.push_back(job.id);
  std::sort(live.begin(), live.end());
  auto dropped = [&](const auto& entry) { return !std::binary_search(live.begin(), live.end(), entry.first); };
  std::vector<storage::JobId> gone;  // had a state: listed by an earlier pass
  for (const auto& entry : jobs_) {
    if (dropped(entry)) gone.push_back(entry.first);
  }
  std::erase_if(jobs_, dropped);
  std::lock_guard lock(mu_);
  std::erase_if(progress_, [&](const auto& entry) {
    const bool newer = live.empty() || entry.first > live.back();
    return dropped(entry) && (!newer || std::binary_search(gone.begin(), gone.end(), entry.first));
  });
  ++passes_;
  last_pass_s_ = std::chrono::duration<double>(Clock::now() - t0).count();
}

Status DiagnosisMonitor::passJob(const storage::JobInfo& info, JobState& st) {
  const std::string& job = info.name;
  if (st.last_told && Clock::now() - *st.last_told > o_.recent_idle) {  // its memory back
    st.recent = RecentSteps(o_.recent_steps);
    st.last_told.reset();
  }
  JobReader reader(store_, job);
  // The job's newest step: known from ingest's notices when there are any (reading it back
  // decodes the newest block of every rank), else read from the store.
  std::optional<uint64_t> newest_known = newestDurable(info.id);
  if (!newest_known) {
    Result<std::optional<uint64_t>> last = reader.lastStep();
    if (!last.isOk()) return last.status();
    newest_known = *last;
  }
  if (!newest_known) return Status::ok();
  const uint64_t newest = *newest_known;
  if (!st.started) {
    // What an earlier run recorded is known: found again, it is not recorded twice.
    Result<std::vector<std::string>> recorded = store_.findings(job);
    if (!recorded.isOk()) return recorded.status();
    for (const std::string& value : *recorded) {
      RecordedFinding r;
      ARGUS_RETURN_IF_ERROR(decodeRecordedFinding(value, &r));
      st.known.insert(keyOf(r.finding));
    }
    st.started = true;
    st.first_step = newest > o_.max_history ? newest - o_.max_history : 0;
    st.next_step = st.first_step;
  }
  if (st.next_step > newest) return Status::ok();
  Result<std::vector<model::RankTopology>> topology = reader.topology();
  if (!topology.isOk()) return topology.status();
  const uint32_t ranks = static_cast<uint32_t>(topology->size());
  // The steps every rank told of, then the store from the first that notices did not
  // complete (nothing to read when they covered every step up to the newest).
  SilentRanks silent;
  Result<std::vector<std::vector<StepPoint>>> read = toldSeries(info, st, st.next_step, ranks, &silent);
  if (!read.isOk()) return read.status();
  const size_t told = read->front().size();
  const uint64_t told_to = told == 0 ? st.next_step : read->front().back().step + 1;
  if (told_to <= newest) {
    Result<std::vector<std::vector<StepPoint>>> stored = reader.stepSeries(kDetectedSeries, told_to, newest, {});
    if (!stored.isOk()) return stored.status();
    for (size_t c = 0; c < read->size(); ++c) (*read)[c].insert((*read)[c].end(), (*stored)[c].begin(), (*stored)[c].end());
  }
  const std::vector<StepPoint>& times = (*read)[0];  // every series has the same steps
  // Feed the steps every rank reported (but the silent), in order; a step some rank never
  // reports is fed once the job is kLateSteps past it (waiting forever would stop the
  // monitor). Without a topology, a step is complete once a later one exists.
  st.ranks = ranks;
  logSilent(info, st, silent);
  const auto now = Clock::now();
  std::array<uint64_t, 2> fed_from{};  // steps fed from notices, and read from the store
  for (size_t i = 0; i < times.size(); ++i) {
    const StepPoint& p = times[i];
    const bool complete = ranks > 0 ? p.ranks >= silent.expectedAt(ranks, p.step) : p.step < newest;
    if (!complete && p.step + kLateSteps > newest) break;
    for (size_t d = 0; d < st.detectors.size(); ++d) st.detectors[d].add(p.step, (*read)[d][i].value, p.expected);
    // Lag counts from when the step's first records were durable (as ingest told), else
    // from now, when this pass read them.
    st.fed[p.step] = {takeArrival(info.id, p.step).value_or(now), p.start_ns, p.end_ns};
    st.next_step = p.step + 1;
    ++fed_from[i < told ? 0 : 1];
  }
  {
    std::lock_guard lock(mu_);
    fed_told_ += fed_from[0];
    fed_read_ += fed_from[1];
  }
  const uint64_t last_fed = st.next_step == 0 ? 0 : st.next_step - 1;

  std::vector<AnomalyWindow> windows;
  for (const ChangeDetector& d : st.detectors) {
    const std::vector<AnomalyWindow> more = d.windows();
    windows.insert(windows.end(), more.begin(), more.end());
  }
  windows = mergeWindows(std::move(windows));
  // Stage 2 reads what the steps' notices told where they hold it all.
  takePending(info.id, st);
  reader.serveRecent(&st.recent, ranks);
  const uint64_t held_before = st.recent.served(), stored_before = st.recent.missed();
  // The windows' reads are counted when a window fails too: they happened.
  Status analyzed = Status::ok();
  for (const AnomalyWindow& w : windows) {
    auto done = st.analyzed.find(w.from_step);
    const bool fresh = done == st.analyzed.end();
    if (!fresh && (done->second == w.to_step || (w.open && w.to_step < done->second + kReanalyzeSteps))) continue;
    Result<std::vector<Finding>> found = diagnoseWindow(reader, *topology, w, st.first_step, windows, o_.diagnose);
    if (!found.isOk()) {
      analyzed = found.status();
      break;
    }
    st.analyzed[w.from_step] = w.to_step;
    for (const Finding& f : *found) {
      if (f.kind == FindingKind::kUnexplained && w.open) continue;  // more steps may explain it
      if (st.known.count(keyOf(f)) != 0) continue;
      analyzed = record(info, st, w, f, last_fed);
      if (!analyzed.isOk()) break;
    }
    if (!analyzed.isOk()) break;
  }
  {
    std::lock_guard lock(mu_);
    reads_held_ += st.recent.served() - held_before;
    reads_stored_ += st.recent.missed() - stored_before;
  }
  ARGUS_RETURN_IF_ERROR(analyzed);
  // Forget what no window can still need: steps fed long ago.
  while (!st.fed.empty() && st.fed.begin()->first + o_.max_history < last_fed) st.fed.erase(st.fed.begin());
  return Status::ok();
}

void DiagnosisMonitor::logSilent(const storage::JobInfo& job, JobState& st, const SilentRanks& silent) {
  std::vector<uint32_t> now;
  for (const auto& [step, rank] : silent.newest) now.push_back(rank);
  std::sort(now.begin(), now.end());
  std::vector<uint32_t> went, back;
  std::set_difference(now.begin(), now.end(), st.silent.begin(), st.silent.end(), std::back_inserter(went));
  std::set_difference(st.silent.begin(), st.silent.end(), now.begin(), now.end(), std::back_inserter(back));
  auto ranks = [](const std::vector<uint32_t>& r) {  // a host's ranks at most, then the count
    constexpr size_t kShown = 16;
    if (r.size() == 1) return "rank " + rankList(r);
    if (r.size() <= kShown) return "ranks " + rankList(r);
    return "ranks " + rankList({r.begin(), r.begin() + kShown}) + ",... (" + std::to_string(r.size()) + ")";
  };
  const char* name = job.name.c_str();
  const auto late = static_cast<unsigned long long>(kLateSteps);
  if (!went.empty()) {
    std::fprintf(stderr, "argusd: job %s: %s told of no new step while the job went %llu steps on: not waited for\n", name, ranks(went).c_str(), late);
  }
  if (!back.empty()) std::fprintf(stderr, "argusd: job %s: %s told of steps again\n", name, ranks(back).c_str());
  if (silent.never > st.silent_never) {
    std::fprintf(stderr, "argusd: job %s: %u of its ranks told of no step in its first %llu steps told: not waited for\n", name, silent.never, late);
  } else if (silent.never < st.silent_never) {
    std::fprintf(stderr, "argusd: job %s: %u of its ranks that had told of no step told of steps\n", name, st.silent_never - silent.never);
  }
  st.silent = std::move(now);
  st.silent_never = silent.never;
}

Status DiagnosisMonitor::record(const storage::JobInfo& info, JobState& st, const AnomalyWindow& w, const Finding& f, uint64_t last_fed) {
  MonitorFinding m;
  m.job = info.name;
  m.finding = f;
  if (auto it = st.fed.find(f.from_step); it != st.fed.end()) m.finding.from_ns = it->second.start_ns;
  if (auto it = st.fed.find(f.to_step); it != st.fed.end()) m.finding.to_ns = it->second.end_ns;
  m.detected_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  // How far the job had run when the finding is recorded: its newest durable step on any
  // rank (known from ingest), at least the last step fed.
  m.steps_after_onset = std::max(last_fed, newestDurable(info.id).value_or(0)) - w.from_step;
  // From when the step that opened the window (its min_steps-th anomalous one) arrived.
  auto opened = st.fed.find(w.from_step + o_.diagnose.detector.min_steps - 1);
  m.lag_s = opened == st.fed.end() ? 0 : std::chrono::duration<double>(Clock::now() - opened->second.at).count();
  // Recorded before it counts as known: a failed write is tried again next pass.
  ARGUS_RETURN_IF_ERROR(store_.addFinding(info.name, encodeRecordedFinding(m)));
  st.known.insert(keyOf(f));
  {
    std::lock_guard lock(mu_);
    ++found_by_kind_[findingKindName(f.kind)];
    last_lag_s_ = m.lag_s;
  }
  if (on_finding_) on_finding_(m);
  return Status::ok();
}

void DiagnosisMonitor::writePrometheus(std::string* out) const {
  std::lock_guard lock(mu_);
  const char* found = "argus_diagnosis_findings_total";
  prometheus::header(out, found, "counter", "Findings of the continuous diagnosis, by kind.");
  for (int k = 0; k <= static_cast<int>(FindingKind::kUnexplained); ++k) {
    const char* kind = findingKindName(static_cast<FindingKind>(k));
    auto it = found_by_kind_.find(kind);
    prometheus::sample(out, found, prometheus::label("kind", kind), it == found_by_kind_.end() ? 0 : static_cast<double>(it->second));
  }
  prometheus::metric(out, "argus_diagnosis_passes_total", "counter", "Passes of the continuous diagnosis over every job.", static_cast<double>(passes_));
  const char* fed = "argus_diagnosis_steps_fed_total";
  prometheus::header(out, fed, "counter", "Steps fed to the online detectors, by where their series came from: ingest's notices, or read from the store.");
  prometheus::sample(out, fed, "source=\"notices\"", static_cast<double>(fed_told_));
  prometheus::sample(out, fed, "source=\"store\"", static_cast<double>(fed_read_));
  const char* reads = "argus_diagnosis_window_reads_total";
  prometheus::header(out, reads, "counter", "Reads of every rank's steps by the diagnosis of a window, by where they came from: the recent steps ingest's notices told, or the store.");
  prometheus::sample(out, reads, "source=\"notices\"", static_cast<double>(reads_held_));
  prometheus::sample(out, reads, "source=\"store\"", static_cast<double>(reads_stored_));
  prometheus::metric(out, "argus_diagnosis_errors_total", "counter", "Jobs whose diagnosis pass failed.", static_cast<double>(errors_));
  const char* silent = "argus_diagnosis_silent_ranks";
  const auto after_s = std::chrono::duration_cast<std::chrono::seconds>(o_.silent_after).count();
  prometheus::header(out, silent, "gauge",
                     "Ranks of a job that have told of no new step while the job went " + std::to_string(kLateSteps) + " steps on and for " +
                         std::to_string(after_s) + " s, or never told of a step: not waited for.");
  for (const auto& [id, p] : progress_) {
    if (!p.name.empty()) prometheus::sample(out, silent, prometheus::label("job", p.name), static_cast<double>(p.silent));
  }
  prometheus::metric(out, "argus_diagnosis_pass_seconds", "gauge", "Time the last pass took.", last_pass_s_);
  prometheus::metric(out, "argus_diagnosis_finding_lag_seconds", "gauge",
                     "For the last finding: seconds from when the first records of the step that opened its window were durable to the finding.", last_lag_s_);
}

}  // namespace argus::diagnose
