// step_stats(job, from_step => NULL, to_step => NULL): per step of a job, the spread of the
// step time across its ranks: how many ranks reported it, min / median / mean / max of
// iter_ns and the slowest rank (the lowest-numbered one on a tie). Steps ascend; bounds are
// inclusive, NULL for open. The first question of a straggler hunt, and what Grafana's
// per-step panels and the diagnosis stages start from.
//
// It reads rank, step and iter_ns of the job's steps in the range (pushed into the scan),
// so the memory it holds is 24 bytes per (rank, step) of the range, counted against the cap.
#include <algorithm>

#include "query/binder/catalog.h"
#include "query/execution/table_scan.h"
#include "query/function/select_nth.h"
#include "query/function/table_function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;

enum Column : size_t { kStep, kRanks, kMin, kMedian, kMean, kMax, kSlowestRank, kColumns };

class StepStatsSource final : public PhysicalOperator {
 public:
  StepStatsSource(QueryContext& ctx, PhysicalOperatorPtr scan, const TableFunctionBinding& binding, std::vector<size_t> column_ids)
      : PhysicalOperator(ctx), column_ids_(std::move(column_ids)), memory_(ctx, "step_stats()") {
    for (size_t id : column_ids_) {
      names.push_back(binding.names[id]);
      types.push_back(binding.types[id]);
    }
    children_.push_back(std::move(scan));  // columns rank, step, iter_ns
  }

  bool produce(DataChunk& out) override {
    ctx_.check();
    if (!computed_) compute();
    if (emitted_ >= steps_) return false;
    const size_t n = std::min(kVectorSize, steps_ - emitted_);
    out.reset(column_ids_.size());
    out.rows = n;
    for (size_t j = 0; j < column_ids_.size(); ++j) {
      Vector& v = out.columns[j];
      v.reset(types[j], n);
      const size_t c = column_ids_[j];
      if (types[j] == L::kDouble) {
        std::copy_n(f64_[c].begin() + static_cast<ptrdiff_t>(emitted_), n, v.f64.begin());
      } else {
        std::copy_n(i64_[c].begin() + static_cast<ptrdiff_t>(emitted_), n, v.i64.begin());
      }
    }
    emitted_ += n;
    return true;
  }

  std::string describe() const override { return "STEP_STATS iter_ns per step over ranks"; }

 private:
  struct Sample {
    int64_t step;
    int64_t iter_ns;
    int64_t rank;
  };

  void compute() {
    computed_ = true;
    std::vector<Sample> samples;
    DataChunk chunk;
    while (children_[0]->next(chunk)) {
      ctx_.check();
      const uint32_t* sel = chunk.selData();
      for (size_t i = 0; i < chunk.size(); ++i) {
        const size_t r = sel ? sel[i] : i;
        samples.push_back(Sample{chunk.columns[1].i64[r], chunk.columns[2].i64[r], chunk.columns[0].i64[r]});
      }
      memory_.set(samples.capacity() * sizeof(Sample));
    }
    // The scan yields rank by rank; a stable sort by step keeps ranks ascending within a step.
    std::stable_sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.step < b.step; });
    ctx_.check();
    std::vector<int64_t> values;
    for (size_t lo = 0; lo < samples.size();) {
      size_t hi = lo;
      __int128 sum = 0;
      const Sample* slowest = &samples[lo];
      int64_t min_ns = samples[lo].iter_ns;
      values.clear();
      for (; hi < samples.size() && samples[hi].step == samples[lo].step; ++hi) {
        const Sample& s = samples[hi];
        sum += s.iter_ns;
        min_ns = std::min(min_ns, s.iter_ns);
        if (s.iter_ns > slowest->iter_ns) slowest = &s;
        values.push_back(s.iter_ns);
      }
      const size_t n = hi - lo;
      // The median as median() has it: the middle value, or the mean of the two middle ones.
      const NthPair mid = selectNth(values, n % 2 == 0 ? n / 2 - 1 : n / 2);
      const double median = n % 2 == 0 ? (static_cast<double>(mid.nth) + static_cast<double>(mid.next)) / 2 : static_cast<double>(mid.nth);
      i64_[kStep].push_back(samples[lo].step);
      i64_[kRanks].push_back(static_cast<int64_t>(n));
      i64_[kMin].push_back(min_ns);
      f64_[kMedian].push_back(median);
      f64_[kMean].push_back(static_cast<double>(sum) / static_cast<double>(n));
      i64_[kMax].push_back(slowest->iter_ns);
      i64_[kSlowestRank].push_back(slowest->rank);
      lo = hi;
    }
    steps_ = i64_[kStep].size();
    samples = {};
    memory_.set(steps_ * (5 * sizeof(int64_t) + 2 * sizeof(double)));
  }

  std::vector<size_t> column_ids_;
  MemoryReservation memory_;
  bool computed_ = false;
  size_t steps_ = 0;
  size_t emitted_ = 0;
  std::vector<int64_t> i64_[kColumns];  // per BIGINT output column
  std::vector<double> f64_[kColumns];   // per DOUBLE output column
};

class StepStats final : public TableFunction {
 public:
  StepStats()
      : TableFunction("step_stats", "per step: the spread of iter_ns across ranks and the slowest rank",
                      {{"job", L::kVarchar, true, {}, "the job"},
                       {"from_step", L::kBigInt, false, Value::null(L::kBigInt), "first step (inclusive); NULL: the job's first"},
                       {"to_step", L::kBigInt, false, Value::null(L::kBigInt), "last step (inclusive); NULL: the job's last"}}) {}

  TableFunctionBinding bind(const TableFunctionArguments& args) const override {
    if (args[0].isNull()) throw BinderError(args.positions[0], "step_stats(): job must not be NULL");
    for (size_t i : {1, 2}) {
      if (!args[i].isNull() && args[i].bigintValue() < 0) {
        throw BinderError(args.positions[i], "step_stats(): " + parameters()[i].name + " must not be negative, got " + args[i].toSql());
      }
    }
    return TableFunctionBinding{{"step", "ranks", "min_iter_ns", "median_iter_ns", "mean_iter_ns", "max_iter_ns", "slowest_rank"},
                                {L::kBigInt, L::kBigInt, L::kBigInt, L::kDouble, L::kDouble, L::kBigInt, L::kBigInt},
                                nullptr,
                                {"step"}};
  }

  PhysicalOperatorPtr execute(const TableFunctionInput& in) const override {
    const std::string& job = in.args[0].stringValue();
    auto info = in.store.findJob(job);
    if (!info.isOk()) throw ExecutionError(in.args.positions[0], "step_stats(): no job '" + job + "' in the store");
    ScanPredicates p;
    p.jobs_restricted = true;
    p.jobs = {job};
    if (!in.args[1].isNull()) p.from_step = static_cast<uint64_t>(in.args[1].bigintValue());
    if (!in.args[2].isNull()) p.to_step = static_cast<uint64_t>(in.args[2].bigintValue()) + 1;  // INT64_MAX + 1 fits
    const TableInfo& steps = *findTable("steps");
    std::vector<size_t> read = {static_cast<size_t>(steps.findColumn("rank")), static_cast<size_t>(steps.findColumn("step")),
                                static_cast<size_t>(steps.findColumn("iter_ns"))};
    auto scan = std::make_unique<TableScan>(in.ctx, in.store, steps, std::move(read), std::move(p));
    return std::make_unique<StepStatsSource>(in.ctx, std::move(scan), in.binding, in.column_ids);
  }
};

}  // namespace

void registerStepStats(TableFunctionRegistry& r) { r.add(std::make_unique<StepStats>()); }

}  // namespace argus::query
