// The binder without a store: output names and types, implicit casts, the GROUP BY rules,
// and bounded cost on pathological nesting (operand copies of BETWEEN and CASE, nested
// quantile() calls).
#include <doctest/doctest.h>

#include <chrono>

#include "query/binder/binder.h"
#include "query/parser/parser.h"
#include "query/planner/planner.h"

using namespace argus::query;

namespace {

std::unique_ptr<BoundSelect> bind(const std::string& sql) {
  Statement s = parse(sql);
  return bindSelect(*s.select, sql);
}

std::string bindError(const std::string& sql) {
  try {
    bind(sql);
  } catch (const BinderError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("names and types of the select list") {
  auto b = bind("SELECT rank, max(total_ns)  /  1e6, step AS s, signature, job, count > 0 FROM kernels GROUP BY rank, step, signature, job, count");
  REQUIRE(b->visible == 6);
  CHECK(b->names == std::vector<std::string>{"rank", "max(total_ns)  /  1e6", "s", "signature", "job", "count > 0"});
  std::vector<LogicalType> types;
  for (size_t i = 0; i < b->visible; ++i) types.push_back(b->projection[i]->type);
  CHECK(types == std::vector<LogicalType>{LogicalType::kBigInt, LogicalType::kDouble, LogicalType::kBigInt, LogicalType::kId,
                                          LogicalType::kVarchar, LogicalType::kBoolean});
  CHECK(b->aggregated);
  CHECK(b->groups.size() == 5);
  CHECK(b->aggregates.size() == 1);
}

TEST_CASE("implicit casts: BIGINT widens, literals convert at bind time") {
  auto b = bind("SELECT step + 0.5, step >= '10', signature = 5 FROM kernels");
  CHECK(b->projection[0]->type == LogicalType::kDouble);
  CHECK(b->projection[0]->children[0]->kind == BoundExprKind::kCast);
  // '10' became the BIGINT constant 10, no cast node left.
  const BoundExpr& cmp = *b->projection[1];
  CHECK(cmp.children[1]->kind == BoundExprKind::kConstant);
  CHECK(cmp.children[1]->value == Value::bigint(10));
  CHECK(b->projection[2]->children[1]->value == Value::id(5));
}

TEST_CASE("the same aggregate is bound once; group expressions match structurally") {
  auto b = bind("SELECT step // 10, max(iter_ns), max(iter_ns) + 1 FROM steps GROUP BY step // 10 ORDER BY max(iter_ns)");
  CHECK(b->aggregates.size() == 1);
  CHECK(b->groups.size() == 1);
  CHECK(b->order.size() == 1);
  CHECK(b->order[0].column == 1);  // reuses the select list's column
  CHECK(b->projection.size() == 3);
}

TEST_CASE("quantile() is the histogram function over a HISTOGRAM, the aggregate otherwise") {
  auto scalar = bind("SELECT quantile(hist, 0.5) FROM kernels");
  CHECK_FALSE(scalar->aggregated);
  auto aggregate = bind("SELECT quantile(total_ns, 0.5) FROM kernels");
  CHECK(aggregate->aggregated);
  auto both = bind("SELECT quantile(hist_merge(hist), 0.9) FROM kernels");
  CHECK(both->aggregated);
  CHECK(both->aggregates.size() == 1);
}

TEST_CASE("nesting that would multiply is bounded") {
  // Each BETWEEN copies its operand: 40 nested ones would be 2^40 nodes.
  std::string between = "TRUE";
  for (int i = 0; i < 40; ++i) between += " BETWEEN FALSE AND TRUE";
  CHECK(bindError("SELECT " + between).find("query too large: BETWEEN and CASE operands expand to more than 100000 expression nodes") !=
        std::string::npos);
  std::string cases = "1";
  for (int i = 0; i < 30; ++i) cases = "CASE " + cases + " WHEN 1 THEN 1 WHEN 2 THEN 2 END";
  CHECK(bindError("SELECT " + cases).find("query too large") != std::string::npos);
  // Nested quantile() calls: deciding aggregate or not is linear, not 2^depth.
  std::string q = "hist";
  for (int i = 0; i < 90; ++i) q = "quantile(" + q + ", 0.5)";
  auto t0 = std::chrono::steady_clock::now();
  std::string err = bindError("SELECT " + q + " FROM kernels");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK(err.find("binder error") != std::string::npos);
}

TEST_CASE("plans without a store: pushdown moves exact conjuncts and prunes columns") {
  auto b = bind("SELECT step FROM steps WHERE job = 'a' AND step BETWEEN 5 AND 9 AND rank IN (3, 1) AND iter_ns > 0");
  LogicalOperatorPtr plan = planSelect(*b, QueryOptions{});
  // Projection <- Filter(iter_ns > 0) <- Get
  REQUIRE(plan->type == LogicalOpType::kProjection);
  const LogicalOperator& filter = *plan->children[0];
  REQUIRE(filter.type == LogicalOpType::kFilter);
  const LogicalOperator& get = *filter.children[0];
  REQUIRE(get.type == LogicalOpType::kGet);
  CHECK(get.predicates.jobs == std::vector<std::string>{"a"});
  CHECK(get.predicates.ranks == std::vector<uint32_t>{1, 3});
  CHECK(get.predicates.from_step == 5);
  CHECK(get.predicates.to_step == 10);
  CHECK(get.names == std::vector<std::string>{"step", "iter_ns"});
}
