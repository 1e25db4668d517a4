#include "query/execution/hash_aggregate.h"

#include <algorithm>
#include <atomic>
#include <exception>

#include "base/worker_threads.h"
#include "query/execution/equal_run.h"
#include "query/execution/table_scan.h"

namespace argus::query {

namespace {

std::vector<LogicalType> typesOf(const std::vector<BoundExprPtr>& exprs) {
  std::vector<LogicalType> out;
  for (const auto& e : exprs) out.push_back(e->type);
  return out;
}

}  // namespace

// One thread's grouping: its groups, its aggregates' states, and the executors of their
// keys and arguments.
struct HashAggregate::Partial {
  explicit Partial(const HashAggregate& agg)
      : agg(agg), table(typesOf(agg.groups_)), memory(agg.ctx_, agg.distinct_ ? "SELECT DISTINCT" : "GROUP BY") {
    for (const auto& g : agg.groups_) keys.emplace_back(*g);
    for (const BoundAggregate& a : agg.aggregates_) {
      std::vector<ExpressionExecutor> exs;
      for (const auto& arg : a.args) exs.emplace_back(*arg);
      args.push_back(std::move(exs));
      AggregateParams params{a.constants, a.pos, a.function->name};
      std::unique_ptr<AggregateState> state = a.function->make(params);
      if (a.distinct) state = makeDistinctAggregate(std::move(state), a.args[0]->type);
      states.push_back(std::move(state));
    }
    shareKeptValues();
    key_vecs.resize(keys.size());
    if (agg.groups_.empty()) resize(1, 0);
  }

  // Aggregates over the argument of one that keeps its values (median, quantiles, mad)
  // answer from those values where they can (AggregateState::readingFrom): they are then
  // neither evaluated nor updated per chunk, nor merged.
  void shareKeptValues() {
    reads.assign(states.size(), false);
    auto sameArgs = [&](size_t x, size_t y) {
      const BoundAggregate& a = agg.aggregates_[x];
      const BoundAggregate& b = agg.aggregates_[y];
      return !a.distinct && !b.distinct && sameExprs(a.args, b.args);
    };
    for (size_t o = 0; o < states.size(); ++o) {
      if (reads[o] || !states[o]->keepsValues()) continue;
      for (size_t r = 0; r < states.size(); ++r) {
        if (r == o || reads[r] || !sameArgs(o, r)) continue;
        if (std::unique_ptr<AggregateState> reader = states[r]->readingFrom(*states[o])) {
          states[r] = std::move(reader);
          reads[r] = true;
        }
      }
    }
  }

  void resize(size_t groups, uint64_t order) {
    ngroups = groups;
    first_order.resize(groups, order);
    for (auto& s : states) s->resize(groups);
  }

  // in's rows, which stand at `order` in the input (TableScanPart::next).
  void consume(const DataChunk& in, uint64_t order) {
    const size_t n = in.size();
    if (n == 0) return;
    const bool global = agg.groups_.empty();
    bool in_runs = false;
    if (!global) {
      for (size_t k = 0; k < keys.size(); ++k) key_vecs[k] = &keys[k].evaluate(in);
      in_runs = keys.size() == 1 && findRuns(*key_vecs[0], n);
      if (!in_runs) table.findOrAdd(key_vecs, n, group_ids);
      if (table.size() != ngroups) resize(table.size(), order);
    }
    const GroupRuns runs{run_groups.data(), run_starts.data(), run_groups.size()};
    bool rows_expanded = false;  // group_ids holds each row's group from the runs
    for (size_t a = 0; a < states.size(); ++a) {
      if (reads[a]) continue;
      arg_vecs.clear();
      for (auto& ex : args[a]) arg_vecs.push_back(&ex.evaluate(in));
      if (in_runs && states[a]->foldsRuns(arg_vecs.data())) {
        states[a]->updateRuns(arg_vecs.data(), runs);
        continue;
      }
      if (in_runs && !rows_expanded) {
        group_ids.resize(n);
        expandRuns(runs, group_ids.data());
        rows_expanded = true;
      }
      states[a]->update(arg_vecs.data(), global ? nullptr : group_ids.data(), n);
    }
    memory.set(bytes());
  }

  // One integer key whose rows come in runs of one value, as a scan delivers rank (its
  // rows by rank): looks the groups up once per run (run_groups, run_starts). False,
  // having found nothing, when the runs are short (under 8 rows on average: per row is
  // then as cheap) or the key is not such a column.
  bool findRuns(const Vector& key, size_t n) {
    if (key.constant || !key.validity.empty() || (key.type != LogicalType::kBigInt && key.type != LogicalType::kId)) return false;
    const int64_t* c = key.i64.data();
    const size_t max_runs = n / 8;
    run_starts.clear();
    run_starts.push_back(0);
    for (size_t i = equalRunEnd(c, 0, n); i < n; i = equalRunEnd(c, i, n)) {
      if (run_starts.size() >= max_runs) return false;
      run_starts.push_back(static_cast<uint32_t>(i));
    }
    const size_t count = run_starts.size();
    run_starts.push_back(static_cast<uint32_t>(n));
    run_keys.reset(key.type, count);
    for (size_t r = 0; r < count; ++r) run_keys.i64[r] = c[run_starts[r]];
    run_key_vecs.assign(1, &run_keys);
    table.findOrAdd(run_key_vecs, count, run_groups);
    return true;
  }

  size_t bytes() const {
    size_t b = table.memoryBytes() + (group_ids.capacity() + run_groups.capacity() + run_starts.capacity()) * 4 + first_order.capacity() * 8;
    for (const auto& s : states) b += s->memoryBytes();
    return b;
  }

  const HashAggregate& agg;
  GroupTable table;
  std::vector<ExpressionExecutor> keys;
  std::vector<std::vector<ExpressionExecutor>> args;
  std::vector<std::unique_ptr<AggregateState>> states;
  std::vector<bool> reads;  // per aggregate: its state reads another's kept values
  size_t ngroups = 0;
  std::vector<uint64_t> first_order;  // per group: the order of the rows that added it
  MemoryReservation memory;
  // Per chunk scratch.
  std::vector<const Vector*> key_vecs;
  std::vector<const Vector*> arg_vecs;
  std::vector<uint32_t> group_ids;
  Vector run_keys;  // findRuns: each run's key, its group, its first row
  std::vector<const Vector*> run_key_vecs;
  std::vector<uint32_t> run_groups, run_starts;
};

HashAggregate::HashAggregate(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<BoundExprPtr> groups, std::vector<BoundAggregate> aggregates,
                             std::vector<std::string> out_names, bool distinct)
    : PhysicalOperator(ctx), groups_(std::move(groups)), aggregates_(std::move(aggregates)), distinct_(distinct) {
  names = std::move(out_names);
  for (const auto& g : groups_) types.push_back(g->type);
  for (const BoundAggregate& a : aggregates_) types.push_back(a.type);
  children_.push_back(std::move(child));
}

HashAggregate::~HashAggregate() = default;

std::unique_ptr<HashAggregate::Partial> HashAggregate::newPartial() const { return std::make_unique<Partial>(*this); }

void HashAggregate::build() {
  built_ = true;
  const size_t threads = scanThreads(ctx_.options());
  all_ = newPartial();
  const bool mergeable = std::all_of(all_->states.begin(), all_->states.end(), [](const auto& s) { return s->mergeable(); });
  std::vector<PhysicalOperatorPtr> parts;
  if (threads > 1 && mergeable) parts = children_[0]->split(threads, SplitOrder::kContiguous);
  if (!parts.empty()) {
    all_ = buildParallel(std::move(parts));
  } else {
    DataChunk in;
    while (children_[0]->next(in)) {
      ctx_.check();
      all_->consume(in, 0);
    }
  }
  ngroups_ = all_->ngroups;
  results_.resize(groups_.size() + aggregates_.size());
  for (size_t k = 0; k < groups_.size(); ++k) all_->table.keyColumn(k, results_[k]);
  for (size_t a = 0; a < aggregates_.size(); ++a) all_->states[a]->finalize(ngroups_, results_[groups_.size() + a], arena_);
  size_t bytes = all_->bytes() + arena_.bytes();
  for (const Vector& v : results_) bytes += memoryBytes(v);
  all_->memory.set(bytes);
}

std::unique_ptr<HashAggregate::Partial> HashAggregate::buildParallel(std::vector<PhysicalOperatorPtr> parts) {
  std::vector<std::unique_ptr<Partial>> partials;
  partials.push_back(std::move(all_));
  for (size_t i = 1; i < parts.size(); ++i) partials.push_back(newPartial());
  std::vector<std::exception_ptr> errors(parts.size());
  std::atomic<bool> failed{false};
  auto work = [&](size_t i) {
    try {
      DataChunk in;
      while (!failed.load(std::memory_order_relaxed) && parts[i]->next(in)) partials[i]->consume(in, in.order);
    } catch (...) {  // the first error stops every part; it is thrown here after the joins
      errors[i] = std::current_exception();
      failed = true;
    }
  };
  runOnThreads(parts.size(), work);
  children_[0]->finishSplit();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  if (partials.size() == 1) return std::move(partials[0]);
  return merge(std::move(partials));
}

std::unique_ptr<HashAggregate::Partial> HashAggregate::merge(std::vector<std::unique_ptr<Partial>> parts) const {
  std::unique_ptr<Partial> out;
  std::vector<std::vector<uint32_t>> into(parts.size());
  size_t first_part = 0;  // parts before it are out already
  if (groups_.empty()) {
    out = newPartial();
    for (auto& v : into) v.assign(1, 0);
  } else {
    // Groups in the order one thread would have added them: by the order of the rows that
    // added each (a stripe's rows are one part's), then in the order that part added them.
    struct Entry {
      uint64_t order;
      uint32_t part, group;
    };
    auto before = [](const Entry& a, const Entry& b) {
      return a.order != b.order ? a.order < b.order : a.part != b.part ? a.part < b.part : a.group < b.group;
    };
    // A part adds its groups as its rows come, in order, so its entries are sorted already
    // (checked; sorted when not). Merging the parts' runs (linear; usually each run follows
    // the last) replaces a sort of every group, which ran on one thread after the scan.
    std::vector<Entry> entries;
    for (uint32_t p = 0; p < parts.size(); ++p) {
      into[p].resize(parts[p]->ngroups);
      const auto run = static_cast<std::ptrdiff_t>(entries.size());
      for (uint32_t g = 0; g < parts[p]->ngroups; ++g) entries.push_back({parts[p]->first_order[g], p, g});
      if (!std::is_sorted(entries.begin() + run, entries.end(), before)) std::sort(entries.begin() + run, entries.end(), before);
      std::inplace_merge(entries.begin(), entries.begin() + run, entries.end(), before);
    }
    // When the first part's groups all come first (parts of contiguous stripes), that part
    // is the result's start as it stands: only the other parts' groups are looked up and
    // merged (half the serial merge of a two-thread GROUP BY rank).
    const size_t n0 = parts[0]->ngroups;
    bool part0_first = true;
    for (size_t i = 0; i < n0 && part0_first; ++i) part0_first = entries[i].part == 0 && entries[i].group == i;
    if (part0_first) {
      out = std::move(parts[0]);
      first_part = 1;
    } else {
      out = newPartial();
    }
    std::vector<std::vector<Vector>> part_keys(parts.size(), std::vector<Vector>(groups_.size()));
    for (size_t p = first_part; p < parts.size(); ++p) {
      for (size_t k = 0; k < groups_.size(); ++k) parts[p]->table.keyColumn(k, part_keys[p][k]);
    }
    std::vector<Vector> run_keys(groups_.size());
    std::vector<const Vector*> run_key_ptrs(groups_.size());
    std::vector<uint32_t> rows, ids;
    for (size_t i = first_part == 0 ? 0 : n0; i < entries.size();) {  // runs of one part's groups
      const uint32_t p = entries[i].part;
      rows.clear();
      for (; i < entries.size() && entries[i].part == p; ++i) rows.push_back(entries[i].group);
      for (size_t k = 0; k < groups_.size(); ++k) {
        gather(part_keys[p][k], rows.data(), rows.size(), run_keys[k]);
        run_key_ptrs[k] = &run_keys[k];
      }
      out->table.findOrAdd(run_key_ptrs, rows.size(), ids);
      for (size_t r = 0; r < rows.size(); ++r) into[p][rows[r]] = ids[r];
    }
    out->resize(out->table.size(), 0);
  }
  for (size_t p = first_part; p < parts.size(); ++p) {
    ctx_.check();
    for (size_t a = 0; a < out->states.size(); ++a) {
      if (!out->reads[a]) out->states[a]->merge(*parts[p]->states[a], into[p].data(), parts[p]->ngroups);
    }
    out->memory.set(out->bytes());
  }
  return out;
}

bool HashAggregate::produce(DataChunk& out) {
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
