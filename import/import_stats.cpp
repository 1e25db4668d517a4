#include "import/import_stats.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "capture/name_rules.h"

namespace argus::import {

namespace {

// Sorts and merges spans in place (touching spans join); returns the union's length.
template <typename Span>
int64_t mergeSpans(std::vector<Span>* spans) {
  std::sort(spans->begin(), spans->end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  size_t out = 0;
  for (const Span& s : *spans) {
    if (s.end <= s.begin) continue;
    if (out > 0 && s.begin <= (*spans)[out - 1].end) {
      (*spans)[out - 1].end = std::max((*spans)[out - 1].end, s.end);
    } else {
      (*spans)[out++] = s;
    }
  }
  spans->resize(out);
  int64_t total = 0;
  for (const Span& s : *spans) total += s.end - s.begin;
  return total;
}

// Length of the intersection of two merged span lists.
template <typename Span>
int64_t overlap(const std::vector<Span>& a, const std::vector<Span>& b) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].begin, b[j].begin), hi = std::min(a[i].end, b[j].end);
    if (hi > lo) total += hi - lo;
    (a[i].end < b[j].end) ? ++i : ++j;
  }
  return total;
}

}  // namespace

void ImportStats::merge(const ImportStats& o) {
  steps += o.steps;
  kernels += o.kernels;
  raw_bytes += o.raw_bytes;
  kernel_event_bytes += o.kernel_event_bytes;
  wire_bytes += o.wire_bytes;
  steady_wire_bytes += o.steady_wire_bytes;
  kernel_total_max_rel_error = std::max(kernel_total_max_rel_error, o.kernel_total_max_rel_error);
  p50_max_rel_error = std::max(p50_max_rel_error, o.p50_max_rel_error);
  p99_max_rel_error = std::max(p99_max_rel_error, o.p99_max_rel_error);
  total_max_abs_error_ns = std::max(total_max_abs_error_ns, o.total_max_abs_error_ns);
  count_mismatches += o.count_mismatches;
}

StepRecordChecker::StepRecordChecker(const capture::NameTable& names, std::span<const capture::TraceEvent> events,
                                     const capture::NameRules& rules, uint32_t block_steps)
    : encoder_(model::StepCodecOptions{}, block_steps), block_steps_(block_steps == 0 ? 1 : block_steps) {
  std::vector<int8_t> comm_by_name(names.size(), -1);
  for (const capture::TraceEvent& e : events) {
    if (e.isGpuActivity()) {
      bool kernel = e.type == capture::EventType::kKernel;
      bool comm = false;
      if (kernel) {
        int8_t& c = comm_by_name[e.name];
        if (c < 0) c = rules.classifyKernel(names.text(e.name)).communication ? 1 : 0;
        comm = c == 1;
        kernel_signatures_.insert(e.id);
      }
      // The launch decides the step unless it is after the work ended or an hour before.
      bool launch_ok = e.launch_ns != capture::kNoTime && e.launch_ns <= e.end_ns && e.start_ns - e.launch_ns <= 3'600'000'000'000;
      by_launch_.push_back({launch_ok ? e.launch_ns : e.start_ns, e.start_ns, e.end_ns, kernel ? e.id : 0, kernel, comm});
      busy_.push_back({e.start_ns, e.end_ns});
      if (kernel && !comm) compute_all_.push_back({e.start_ns, e.end_ns});
    } else if (e.type == capture::EventType::kRange) {
      std::string_view name = names.text(e.name);
      if (rules.stepMarker(name)) marker_end_.emplace(e.start_ns, e.end_ns);
      if (rules.classifyRange(name) == capture::RangeClass::kDataLoad) data_load_.push_back({e.start_ns, e.end_ns});
    }
  }
  by_start_ = by_launch_;
  for (Member& m : by_start_) m.key = m.start;
  auto byKey = [](const Member& a, const Member& b) { return a.key < b.key; };
  std::stable_sort(by_launch_.begin(), by_launch_.end(), byKey);
  std::stable_sort(by_start_.begin(), by_start_.end(), byKey);
  mergeSpans(&busy_);
  mergeSpans(&compute_all_);
  mergeSpans(&data_load_);
}

ImportStats StepRecordChecker::finish() const {
  ImportStats s = stats_;
  if (s.steps > 1) {
    double later = static_cast<double>(s.wire_bytes - first_record_bytes_) / static_cast<double>(s.steps - 1);
    double per_step = (static_cast<double>(first_record_bytes_) + static_cast<double>(block_steps_ - 1) * later) / block_steps_;
    s.steady_wire_bytes = per_step * static_cast<double>(s.steps);
  } else {
    s.steady_wire_bytes = static_cast<double>(s.wire_bytes);  // one step: nothing repeats
  }
  return s;
}

void StepRecordChecker::noteKernelTimeError(int64_t recorded, int64_t exact) {
  double err = exact == 0 ? (recorded == 0 ? 0.0 : 1.0) : std::fabs(static_cast<double>(recorded - exact)) / static_cast<double>(exact);
  stats_.kernel_total_max_rel_error = std::max(stats_.kernel_total_max_rel_error, err);
}

void StepRecordChecker::noteError(int64_t approx, int64_t exact) {
  int64_t err = approx > exact ? approx - exact : exact - approx;
  stats_.total_max_abs_error_ns = std::max(stats_.total_max_abs_error_ns, err);
}

void StepRecordChecker::add(const model::StepRecord& rec) {
  encoded_.clear();
  encoder_.encode(rec, &encoded_);
  stats_.wire_bytes += encoded_.size();
  if (stats_.steps == 0) first_record_bytes_ = encoded_.size();
  ++stats_.steps;
  for (const model::KernelStat& k : rec.kernels) {
    if (kernel_signatures_.count(k.signature)) stats_.kernels += k.count;
  }
  const std::vector<Member>& sorted = (rec.flags & model::kStepInferred) ? by_start_ : by_launch_;
  auto first = std::lower_bound(sorted.begin(), sorted.end(), rec.start_ns, [](const Member& m, int64_t t) { return m.key < t; });
  auto last = std::lower_bound(first, sorted.end(), rec.end_ns, [](const Member& m, int64_t t) { return m.key < t; });
  std::vector<const Member*> members;
  for (auto it = first; it != last; ++it) members.push_back(&*it);
  checkQuantiles(rec, members);
  checkTotals(rec, members);
}

void StepRecordChecker::checkQuantiles(const model::StepRecord& rec, const std::vector<const Member*>& members) {
  std::map<uint64_t, std::vector<int64_t>> exact;
  std::map<uint64_t, int64_t> exact_time, recorded_time;
  for (const Member* m : members) {
    if (m->kernel) {
      exact[m->signature].push_back(m->end - m->start);
      exact_time[m->signature] += m->end - m->start;
    }
  }
  // A signature may sit in several phases: its histograms merge exactly.
  std::map<uint64_t, model::DurationHistogram> recorded;
  for (const model::KernelStat& k : rec.kernels) {
    if (kernel_signatures_.count(k.signature)) {
      recorded[k.signature].merge(k.hist);
      recorded_time[k.signature] += k.total_ns;
    }
  }
  for (const auto& [signature, time] : exact_time) noteKernelTimeError(recorded_time[signature], time);
  for (const auto& [signature, hist] : recorded) {
    if (!exact.count(signature)) ++stats_.count_mismatches;
  }
  for (auto& [signature, durations] : exact) {
    auto it = recorded.find(signature);
    if (it == recorded.end() || it->second.count() != durations.size()) {
      ++stats_.count_mismatches;
      continue;
    }
    std::sort(durations.begin(), durations.end());
    for (double q : {0.5, 0.99}) {
      // The element of 0-based rank floor(q * (n - 1)): the quantile the sketch estimates.
      double rank = q * static_cast<double>(durations.size() - 1);
      double truth = static_cast<double>(durations[static_cast<size_t>(std::floor(rank))]);
      double approx = it->second.quantile(q);
      double err = truth == 0 ? (approx == 0 ? 0.0 : 1.0) : std::fabs(approx - truth) / truth;
      double& worst = q == 0.5 ? stats_.p50_max_rel_error : stats_.p99_max_rel_error;
      worst = std::max(worst, err);
    }
  }
}

void StepRecordChecker::checkTotals(const model::StepRecord& rec, const std::vector<const Member*>& members) {
  const int64_t b = rec.start_ns, e = rec.end_ns;
  if (!(rec.flags & model::kStepInferred)) {
    auto it = marker_end_.find(b);
    if (it != marker_end_.end()) {
      noteError(rec.iter_ns, it->second - b);
    } else {
      ++stats_.count_mismatches;  // a marker step the trace has no marker for
    }
  }
  std::vector<Span> compute, comm;
  int64_t kernel_time = 0;
  for (const Member* m : members) {
    kernel_time += m->end - m->start;
    if (m->kernel) (m->comm ? comm : compute).push_back({m->start, m->end});
  }
  int64_t recorded_time = 0;
  for (const model::KernelStat& k : rec.kernels) recorded_time += k.total_ns;
  noteKernelTimeError(recorded_time, kernel_time);
  noteError(rec.phase(model::PhaseColumn::kCompute), mergeSpans(&compute));
  int64_t comm_total = mergeSpans(&comm);
  noteError(rec.phase(model::PhaseColumn::kCommTotal), comm_total);
  noteError(rec.phase(model::PhaseColumn::kCommExposed), comm_total - overlap(comm, compute_all_));
  std::vector<Span> window{{b, e}};
  noteError(rec.phase(model::PhaseColumn::kGpuIdle), (e - b) - overlap(busy_, window));
  noteError(rec.phase(model::PhaseColumn::kDataWait), overlap(data_load_, window));
}

}  // namespace argus::import
