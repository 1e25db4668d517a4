// DiagnosisMonitor: the diagnosis in continuous mode (argusd --diagnose-interval-ms,
// docs/query/diagnosis.md "Continuous mode"). A pass starts as soon as every rank of a job
// has made its next step durable (noteDurable, told by the ingest committer), and at the
// latest an interval after the last one. For each job with new steps, it feeds the steps
// every rank has reported to the job's own online detectors (kDetectedSeries,
// diagnose/change_detector.h), and runs stages 2 and 3 on a window when it opens, every 16
// steps while it grows, and when it closes. A finding not seen before is recorded in the
// store (the `findings(job)` table function reads them), handed to the callback (argusd
// logs it) and counted for /metrics. A job's recorded findings are known from its first
// pass on: a restart does not record them again.
//
// Stage 1 reads nothing back: ingest tells each record's summary as it becomes durable
// (model/step_summary.h), and a step every rank has told of is fed from those. The store is
// read only for the steps notices did not complete: a job written without them, records
// durable before argusd started, a rank that re-sent an older step. Stage 2 reads every
// rank's phases over a window and its baseline from the summaries of the job's recent steps
// (diagnose/recent_steps.h) where they hold them all, else from the store.
//
// A step some rank never reports is fed once the job is 64 steps past it; without a
// topology, once a later step exists. A rank that has gone silent (told of no new step
// while the job went 64 steps on, and for silent_after: a dead process, a tracer cut off) is
// not waited for at the steps after its last: they are fed once the others told of them.
// Thread-safety: start/stop from one thread; writePrometheus and noteDurable from any.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>

#include "diagnose/diagnosis.h"
#include "diagnose/finding_record.h"
#include "model/step_summary.h"

namespace argus::diagnose {

struct MonitorOptions {
  std::chrono::milliseconds interval{1000};
  uint64_t max_history = 2000;  // steps read back for a job first seen (argusd restarted on old data)
  // Steps of every rank held from notices for stages 2 and 3 (diagnose/recent_steps.h):
  // 8 MB per 1,024 ranks at 128; given back once the job has told nothing for recent_idle
  // (finished, or stalled).
  uint32_t recent_steps = 128;
  std::chrono::milliseconds recent_idle{std::chrono::minutes(5)};
  // A rank is silent (not waited for) once it told of no new step while the job went 64 steps
  // on and for at least this long: a sender or an ingest queue that falls behind for a moment
  // is not a rank gone.
  std::chrono::milliseconds silent_after{std::chrono::seconds(30)};
  DiagnoseOptions diagnose;
};

// A new finding, recorded in the store (Store::addFinding) before it is handed on.
struct MonitorFinding : RecordedFinding {
  std::string job;
};

class DiagnosisMonitor {
 public:
  using Callback = std::function<void(const MonitorFinding&)>;
  DiagnosisMonitor(storage::Store& store, MonitorOptions options, Callback on_finding);
  ~DiagnosisMonitor();
  DiagnosisMonitor(const DiagnosisMonitor&) = delete;
  DiagnosisMonitor& operator=(const DiagnosisMonitor&) = delete;

  void start();  // the thread: a pass when a step is complete, or an interval after the last
  void stop();
  // One pass over every job: what the thread runs. A job's failure is counted and logged on
  // stderr; the others go on.
  void pass();
  void writePrometheus(std::string* out) const;
  // These records of job `job` are durable (any thread; returns at once). When every rank
  // of the job has the step the next pass would feed, that pass starts now.
  void noteDurable(storage::JobId job, std::span<const model::StepSummary> records);

 private:
  struct JobState;
  Status passJob(const storage::JobInfo& job, JobState& state);
  // Records a new finding of window w: stored, counted, handed to the callback.
  Status record(const storage::JobInfo& job, JobState& state, const AnomalyWindow& w, const Finding& f, uint64_t last_fed);
  // A step not fed yet, as notices told it: the detected series' max over the ranks that
  // reported it (each rank once: a step counts only past the rank's newest).
  struct StepSums {
    uint32_t ranks = 0;
    std::array<int64_t, 3> max{};  // kDetectedSeries
    int64_t start_ns = 0, end_ns = 0;
    std::vector<uint64_t> markers;  // marker name ids
  };
  // How far each rank of a job has written, against the step its next pass would feed.
  struct Progress {
    struct Rank {
      uint64_t newest;     // its newest durable step
      uint64_t heard_at;   // the job's newest step when the rank's last moved on
      std::chrono::steady_clock::time_point heard_when;
    };
    std::unordered_map<uint32_t, Rank> newest;      // by rank
    std::optional<uint64_t> newest_step;            // the largest of them
    std::optional<uint64_t> first_step;             // the smallest step told of
    std::chrono::steady_clock::time_point first_when;  // when it was told
    bool known = false;                             // a pass has read the job's topology
    uint32_t ranks = 0;                             // its ranks (0: it has none)
    uint64_t awaited = 0;                           // the next step to feed
    uint32_t reached = 0;                           // ranks whose newest step >= awaited
    uint32_t needed = 0;                            // of them, the ranks awaited needs (SilentRanks)
    std::string name;                               // the job's, once a pass has seen it
    uint32_t silent = 0;                            // its silent ranks (SilentRanks) at the last pass
    // When records first became durable: each key's time holds for the steps above the
    // previous key up to it (a notice that raised newest_step). Kept until fed.
    std::map<uint64_t, std::chrono::steady_clock::time_point> arrived;
    std::map<uint64_t, StepSums> sums;  // steps >= awaited, within max_history of the newest
    // Summaries told since the last pass took them (for its RecentSteps), at most
    // kPendingSteps steps of every rank; past that they are dropped, and the steps they
    // covered, up to lost_through, are read from the store.
    std::vector<model::StepSummary> pending;
    std::optional<uint64_t> lost_through;
  };
  // The ranks of a job gone silent: told of no new step while the job went kLateSteps steps
  // on, and for MonitorOptions::silent_after (their newest steps; a rank that lags but moves
  // on is not silent), and ranks never told of once the job is that far past its first step
  // told. A step does not wait for a rank silent since before it.
  struct SilentRanks {
    uint32_t never = 0;
    std::vector<std::pair<uint64_t, uint32_t>> newest;  // (newest step, rank), sorted
    // Of the job's `ranks`, those that step waits for.
    uint32_t expectedAt(uint32_t ranks, uint64_t step) const;
  };
  SilentRanks silentRanks(const Progress& p) const;  // REQUIRES: mu_ held
  void noteRecord(Progress& p, const model::StepSummary& r);  // REQUIRES: mu_ held
  // The job's steps from `from` on that every one of its `ranks` told of (but the silent
  // ones, into *silent), in order up to the first that is not complete or not told, as the
  // series stage 1 reads (kDetectedSeries).
  Result<std::vector<std::vector<StepPoint>>> toldSeries(const storage::JobInfo& job, JobState& st, uint64_t from, uint32_t ranks, SilentRanks* silent);
  std::optional<uint64_t> newestDurable(storage::JobId job) const;  // over its ranks; none when never told
  // The summaries told of the job since the last call, into its recent steps.
  void takePending(storage::JobId job, JobState& st);
  // When step's first records became durable, as notices told; forgets the steps before it.
  std::optional<std::chrono::steady_clock::time_point> takeArrival(storage::JobId job, uint64_t step);
  // After a pass over the job: what it waits for next. REQUIRES: mu_ held.
  void awaitStep(const storage::JobInfo& job, std::optional<uint32_t> ranks, uint64_t step);
  // Logs the ranks that went silent, or told again, since the job's last pass.
  static void logSilent(const storage::JobInfo& job, JobState& st, const SilentRanks& silent);

  storage::Store& store_;
  MonitorOptions o_;
  Callback on_finding_;
  // By id, not name: a job dropped (retention) and created again under its name starts
  // afresh. The pass's thread only.
  std::map<storage::JobId, std::unique_ptr<JobState>> jobs_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool pass_due_ = false;                          // GUARDED_BY(mu_): some job's next step is complete
  std::map<storage::JobId, Progress> progress_;    // GUARDED_BY(mu_)
  std::thread thread_;
  std::map<std::string, uint64_t> found_by_kind_;  // GUARDED_BY(mu_)
  uint64_t passes_ = 0, errors_ = 0;               // GUARDED_BY(mu_)
  uint64_t fed_told_ = 0, fed_read_ = 0;           // GUARDED_BY(mu_): steps fed from notices, from the store
  uint64_t reads_held_ = 0, reads_stored_ = 0;     // GUARDED_BY(mu_): stage 2's reads from recent steps, from the store
  double last_pass_s_ = 0, last_lag_s_ = 0;        // GUARDED_BY(mu_)
};

}  // namespace argus::diagnose
