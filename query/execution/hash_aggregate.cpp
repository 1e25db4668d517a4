#include "query/execution/hash_aggregate.h"

#include <algorithm>

namespace argus::query {

namespace {

std::vector<LogicalType> typesOf(const std::vector<BoundExprPtr>& exprs) {
  std::vector<LogicalType> out;
  for (const auto& e : exprs) out.push_back(e->type);
  return out;
}

}  // namespace

HashAggregate::HashAggregate(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<BoundExprPtr> groups, std::vector<BoundAggregate> aggregates,
                             std::vector<std::string> out_names, bool distinct)
    : PhysicalOperator(ctx),
      groups_(std::move(groups)),
      aggregates_(std::move(aggregates)),
      distinct_(distinct),
      table_(typesOf(groups_)),
      memory_(ctx, distinct ? "SELECT DISTINCT" : "GROUP BY") {
  names = std::move(out_names);
  for (const auto& g : groups_) {
    types.push_back(g->type);
    key_executors_.emplace_back(*g);
  }
  for (const BoundAggregate& a : aggregates_) {
    types.push_back(a.type);
    std::vector<ExpressionExecutor> args;
    for (const auto& arg : a.args) args.emplace_back(*arg);
    arg_executors_.push_back(std::move(args));
    AggregateParams params{a.constants, a.pos, a.function->name};
    std::unique_ptr<AggregateState> state = a.function->make(params);
    if (a.distinct) state = makeDistinctAggregate(std::move(state), a.args[0]->type);
    states_.push_back(std::move(state));
  }
  children_.push_back(std::move(child));
}

void HashAggregate::build() {
  built_ = true;
  const bool global = groups_.empty();
  if (global) {
    ngroups_ = 1;
    for (auto& s : states_) s->resize(1);
  }
  DataChunk in;
  std::vector<const Vector*> keys(groups_.size());
  std::vector<uint32_t> group_ids;
  std::vector<const Vector*> args;
  while (children_[0]->next(in)) {
    ctx_.check();
    size_t n = in.size();
    if (n == 0) continue;
    if (!global) {
      for (size_t k = 0; k < groups_.size(); ++k) keys[k] = &key_executors_[k].evaluate(in);
      table_.findOrAdd(keys, n, group_ids);
      if (table_.size() != ngroups_) {
        ngroups_ = table_.size();
        for (auto& s : states_) s->resize(ngroups_);
      }
    }
    for (size_t a = 0; a < states_.size(); ++a) {
      args.clear();
      for (auto& ex : arg_executors_[a]) args.push_back(&ex.evaluate(in));
      states_[a]->update(args.data(), global ? nullptr : group_ids.data(), n);
    }
    size_t bytes = table_.memoryBytes() + group_ids.capacity() * 4;
    for (const auto& s : states_) bytes += s->memoryBytes();
    memory_.set(bytes);
  }
  results_.resize(groups_.size() + states_.size());
  for (size_t k = 0; k < groups_.size(); ++k) table_.keyColumn(k, results_[k]);
  for (size_t a = 0; a < states_.size(); ++a) states_[a]->finalize(ngroups_, results_[groups_.size() + a], arena_);
  size_t bytes = table_.memoryBytes() + arena_.bytes();
  for (const auto& s : states_) bytes += s->memoryBytes();
  for (const Vector& v : results_) bytes += memoryBytes(v);
  memory_.set(bytes);
}

bool HashAggregate::next(DataChunk& out) {
  if (!built_) build();
  if (emitted_ >= ngroups_) return false;
  ctx_.check();
  size_t n = std::min(kVectorSize, ngroups_ - emitted_);
  out.reset(results_.size());
  out.rows = n;
  for (size_t c = 0; c < results_.size(); ++c) slice(results_[c], emitted_, n, out.columns[c]);
  emitted_ += n;
  return true;
}

std::string HashAggregate::describe() const {
  const std::vector<std::string>& in = children_[0]->names;
  std::string out = distinct_ ? "DISTINCT [" : "HASH_AGGREGATE groups=[";
  for (size_t i = 0; i < groups_.size(); ++i) out += (i ? ", " : "") + exprText(*groups_[i], in);
  out += "]";
  if (distinct_) return out;
  out += " aggregates=[";
  for (size_t i = 0; i < aggregates_.size(); ++i) {
    const BoundAggregate& a = aggregates_[i];
    out += (i ? ", " : "") + a.function->name + "(" + (a.distinct ? "DISTINCT " : "");
    if (a.args.empty() && a.constants.empty()) out += "*";
    for (size_t k = 0; k < a.args.size(); ++k) out += (k ? ", " : "") + exprText(*a.args[k], in);
    for (const Value& v : a.constants) out += ", " + v.toSql();
    out += ")";
  }
  return out + "]";
}

}  // namespace argus::query
