// recent_steps(job, last => 100, ranks => NULL): the `steps` rows of job `job` whose step is
// among its last `last` step numbers (step > the job's highest step - last), optionally of
// some ranks only: the same rows, in the same order, as
// `SELECT * FROM steps WHERE job = job AND step > max_step - last [AND rank IN (...)]`.
// Job, step range, ranks and the columns read go into the store's scan (a TableScan), so it
// reads the last blocks of the ranks asked for and nothing else.
#include <algorithm>
#include <charconv>

#include "query/binder/catalog.h"
#include "query/execution/table_scan.h"
#include "query/function/table_function_registry.h"
#include "query/planner/pushdown.h"

namespace argus::query {

namespace {

struct RecentStepsData final : TableFunctionBindData {
  bool ranks_restricted = false;
  std::vector<uint32_t> ranks;  // sorted, unique
};

// "0,4-7, 12" -> {0, 4, 5, 6, 7, 12}. Throws BinderError at pos for anything else.
std::vector<uint32_t> parseRanks(const std::string& text, SourcePos pos) {
  constexpr uint64_t kMaxRanks = 1 << 20;  // a list longer than a cluster is a typo (0-4000000000)
  auto fail = [&](const std::string& why) -> BinderError {
    return BinderError(pos, "recent_steps(): ranks must list ranks and ranges like '0,4-7', got '" + text + "': " + why);
  };
  auto number = [&](std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) throw fail("'" + std::string(s) + "' is not a rank");
    return v;
  };
  std::vector<uint32_t> out;
  std::string_view rest = text;
  for (;;) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    size_t dash = item.find('-');
    uint32_t lo = number(item.substr(0, dash));
    uint32_t hi = dash == std::string_view::npos ? lo : number(item.substr(dash + 1));
    if (hi < lo) throw fail("range " + std::to_string(lo) + "-" + std::to_string(hi) + " is empty");
    if (out.size() + (uint64_t{hi} - lo + 1) > kMaxRanks) throw fail("more than " + std::to_string(kMaxRanks) + " ranks");
    for (uint64_t r = lo; r <= hi; ++r) out.push_back(static_cast<uint32_t>(r));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

class RecentSteps final : public TableFunction {
 public:
  RecentSteps()
      : TableFunction("recent_steps", "the steps rows of a job's last steps",
                      {{"job", LogicalType::kVarchar, true, {}, "the job"},
                       {"last", LogicalType::kBigInt, false, Value::bigint(100), "how many step numbers back from the job's highest step"},
                       {"ranks", LogicalType::kVarchar, false, Value::null(LogicalType::kVarchar),
                        "ranks and ranges like '0,4-7'; NULL: all"}}) {}

  TableFunctionBinding bind(const TableFunctionArguments& args) const override {
    if (args[0].isNull()) throw BinderError(args.positions[0], "recent_steps(): job must not be NULL");
    if (args[1].isNull() || args[1].bigintValue() <= 0) {
      throw BinderError(args.positions[1], "recent_steps(): last must be a positive BIGINT, got " + args[1].toSql());
    }
    auto data = std::make_shared<RecentStepsData>();
    if (!args[2].isNull()) {
      data->ranks_restricted = true;
      data->ranks = parseRanks(args[2].stringValue(), args.positions[2]);
    }
    TableFunctionBinding b;
    for (const TableColumn& c : steps().columns) {
      b.names.push_back(c.name);
      b.types.push_back(c.type);
    }
    b.data = std::move(data);
    b.order = {"rank", "step"};  // a store scan of one job
    return b;
  }

  PhysicalOperatorPtr execute(const TableFunctionInput& in) const override {
    const std::string& job = in.args[0].stringValue();
    auto last_step = in.store.lastStep(job);
    if (!last_step.isOk()) {
      if (last_step.status().isNotFound()) throw ExecutionError(in.args.positions[0], "recent_steps(): no job '" + job + "' in the store");
      throw ExecutionError(in.args.positions[0], "recent_steps(): reading job '" + job + "': " + last_step.status().toString());
    }
    const auto& data = static_cast<const RecentStepsData&>(*in.binding.data);
    ScanPredicates p;
    p.jobs_restricted = true;
    p.jobs = {job};
    p.ranks_restricted = data.ranks_restricted;
    p.ranks = data.ranks;
    const uint64_t last = static_cast<uint64_t>(in.args[1].bigintValue());
    if (!last_step->has_value()) {
      p.to_step = 0;  // no steps yet: nothing to read
    } else {
      const uint64_t max_step = **last_step;
      p.from_step = max_step >= last ? max_step - last + 1 : 0;
    }
    return std::make_unique<TableScan>(in.ctx, in.store, steps(), in.column_ids, intersectPredicates(std::move(p), in.pushed));
  }

  const TableInfo* rowsOf() const override { return &steps(); }

 private:
  static const TableInfo& steps() { return *findTable("steps"); }
};

}  // namespace

void registerRecentSteps(TableFunctionRegistry& r) { r.add(std::make_unique<RecentSteps>()); }

}  // namespace argus::query
