// generate_series(start, stop, step => 1): the BIGINTs start, start + step, ... up to and
// including stop (down to it for a negative step), as PostgreSQL and DuckDB have it. A NULL
// argument gives no rows; step 0 is an error.
#include "query/execution/physical_operator.h"
#include "query/function/table_function_registry.h"

namespace argus::query {

namespace {

// Streams the series a chunk at a time: nothing is held, whatever its length.
class SeriesSource final : public PhysicalOperator {
 public:
  SeriesSource(QueryContext& ctx, int64_t start, int64_t step, unsigned __int128 count, bool produce)
      : PhysicalOperator(ctx), start_(start), step_(step), count_(count) {
    if (produce) {
      names.push_back("generate_series");
      types.push_back(LogicalType::kBigInt);
    }
  }

  bool produce(DataChunk& out) override {
    ctx_.check();
    if (done_ >= count_) return false;
    const size_t n = static_cast<size_t>(std::min<unsigned __int128>(kVectorSize, count_ - done_));
    out.reset(types.size());
    out.rows = n;
    if (!types.empty()) {
      Vector& v = out.columns[0];
      v.reset(LogicalType::kBigInt, n);
      // In 128 bits: start + i * step stays within [start, stop] for every row produced.
      for (size_t i = 0; i < n; ++i) v.i64[i] = static_cast<int64_t>(start_ + static_cast<__int128>(done_ + i) * step_);
    }
    done_ += n;
    ctx_.stats().rows_scanned += n;
    return true;
  }

  std::string describe() const override {
    // Every BIGINT is 2^64 rows, one more than a uint64_t holds.
    std::string rows = count_ > UINT64_MAX ? "18446744073709551616" : std::to_string(static_cast<uint64_t>(count_));
    return "SERIES start=" + std::to_string(start_) + " step=" + std::to_string(step_) + " rows=" + rows;
  }

 private:
  int64_t start_, step_;
  unsigned __int128 count_;
  unsigned __int128 done_ = 0;
};

class GenerateSeries final : public TableFunction {
 public:
  GenerateSeries()
      : TableFunction("generate_series", "the BIGINTs from start to stop (inclusive), step apart",
                      {{"start", LogicalType::kBigInt, true, {}, "first value"},
                       {"stop", LogicalType::kBigInt, true, {}, "last value (inclusive), if the steps land on it"},
                       {"step", LogicalType::kBigInt, false, Value::bigint(1), "distance between values; negative counts down; not 0"}}) {}

  TableFunctionBinding bind(const TableFunctionArguments& args) const override {
    if (!args[2].isNull() && args[2].bigintValue() == 0) throw BinderError(args.positions[2], "generate_series(): step must not be 0");
    const bool ascending = args[2].isNull() || args[2].bigintValue() > 0;
    return TableFunctionBinding{{"generate_series"}, {LogicalType::kBigInt}, nullptr, ascending ? std::vector<std::string>{"generate_series"}
                                                                                                   : std::vector<std::string>{}};
  }

  PhysicalOperatorPtr execute(const TableFunctionInput& in) const override {
    const TableFunctionArguments& a = in.args;
    unsigned __int128 count = 0;
    if (!a[0].isNull() && !a[1].isNull() && !a[2].isNull()) {
      const __int128 start = a[0].bigintValue(), stop = a[1].bigintValue(), step = a[2].bigintValue();
      if (step > 0 ? start <= stop : start >= stop) count = static_cast<unsigned __int128>((stop - start) / step + 1);
    }
    return std::make_unique<SeriesSource>(in.ctx, a[0].isNull() ? 0 : a[0].bigintValue(), a[2].isNull() ? 1 : a[2].bigintValue(), count,
                                          !in.column_ids.empty());
  }
};

}  // namespace

void registerGenerateSeries(TableFunctionRegistry& r) { r.add(std::make_unique<GenerateSeries>()); }

}  // namespace argus::query
