// DiagnosisMonitor: the diagnosis in continuous mode (argusd --diagnose-interval-ms,
// docs/query/diagnosis.md "Continuous mode"). Every interval, for each job with new steps,
// it feeds the steps every rank has reported to the job's own online detectors (the step
// time and the slowest rank's compute, diagnose/change_detector.h), and runs stages 2 and 3
// on a window when it opens, every 16 steps while it grows, and when it closes. A finding
// not seen before is recorded in the store (the `findings(job)` table function reads them),
// handed to the callback (argusd logs it) and counted for /metrics. A job's recorded
// findings are known from its first pass on: a restart does not record them again.
//
// The newest step is fed once a later one exists (its last ranks may still be arriving), or
// once every rank reported it. Thread-safety: start/stop from one thread; writePrometheus
// from any.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "diagnose/diagnosis.h"
#include "diagnose/finding_record.h"

namespace argus::diagnose {

struct MonitorOptions {
  std::chrono::milliseconds interval{1000};
  uint64_t max_history = 2000;  // steps read back for a job first seen (argusd restarted on old data)
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

  void start();  // the thread, one pass per interval
  void stop();
  // One pass over every job: what the thread runs. A job's failure is counted and logged on
  // stderr; the others go on.
  void pass();
  void writePrometheus(std::string* out) const;

 private:
  struct JobState;
  Status passJob(const std::string& job, JobState& state);

  storage::Store& store_;
  MonitorOptions o_;
  Callback on_finding_;
  std::map<std::string, std::unique_ptr<JobState>> jobs_;  // the pass's thread only

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
  std::map<std::string, uint64_t> found_by_kind_;  // GUARDED_BY(mu_)
  uint64_t passes_ = 0, errors_ = 0;               // GUARDED_BY(mu_)
  double last_pass_s_ = 0, last_lag_s_ = 0;        // GUARDED_BY(mu_)
};

}  // namespace argus::diagnose
