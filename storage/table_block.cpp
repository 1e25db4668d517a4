// Row extraction (StepRecord -> table rows) and its inverse.
#include "storage/table_block.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <limits>
#include <type_traits>

namespace argus::storage {
namespace {

constexpr uint8_t kKernelKeys[] = {3, 4};
constexpr uint8_t kCollectiveKeys[] = {3, 4, 5, 6};
constexpr uint8_t kOneKey[] = {3};

int64_t u(uint64_t v) { return static_cast<int64_t>(v); }

}  // namespace

std::span<const uint8_t> groupKeyColumns(Table t) {
  switch (t) {
    case Table::kSteps: return {};
    case Table::kKernels: return kKernelKeys;
    case Table::kCollectives: return kCollectiveKeys;
    case Table::kStacks: return kOneKey;
    case Table::kEvents: return kOneKey;
  }
  return {};
}

namespace {
// steps: end_ns (4) = start_ns (3) + iter_ns (5); compute_ns (11) = forward (7) + backward (8)
// + optimizer (9). Do not change: stored chunks are decoded with these (docs/format/codecs.md).
// compute_ns is no longer written against its terms: it is the column straggler queries read
// alone, and its residual chunk made that read four chunks (saving ~4 B per rank-step).
constexpr SumPredictor kStepsPredictors[] = {{4, {3, 5, 0}, 2, true}, {11, {7, 8, 9}, 3, false}};
}  // namespace

const SumPredictor* sumPredictorOf(Table t, uint8_t column) {
  if (t != Table::kSteps) return nullptr;
  for (const auto& p : kStepsPredictors) {
    if (p.column == column) return &p;
  }
  return nullptr;
}

void TableBlock::predict(const SumPredictor& p, std::vector<int64_t>* out) const {
  out->assign(rows, 0);
  int64_t* acc = out->data();
  for (uint8_t k = 0; k < p.nterms; ++k) {
    const auto& term = columns[p.terms[k]].ints;
    const size_t n = std::min(rows, term.size());
    for (size_t i = 0; i < n; ++i) acc[i] = static_cast<int64_t>(static_cast<uint64_t>(acc[i]) + static_cast<uint64_t>(term[i]));
  }
}

void TableBlock::shapeFor(Table t) {
  rows = 0;
  auto defs = tableColumns(t);
  // A scan resets a block per rank-block it reads, nearly always to the same table: the
  // names and types stay (assigning the steps table's 25 names was ~1,600 instructions).
  if (t != table || columns.size() != defs.size()) {
    table = t;
    columns.resize(defs.size());
    for (size_t i = 0; i < defs.size(); ++i) {
      columns[i].name.assign(defs[i].name);
      columns[i].type = defs[i].type;
    }
  }
}

void TableBlock::reset(Table t) {
  shapeFor(t);
  steps.clear();
  row_counts.clear();
  for (Column& c : columns) {
    c.ints.clear();
    c.hists.clear();
  }
  decoded_ = kept_ = {};
  filled_all_ = true;  // append fills every column
}

void TableBlock::beginDecode(Table t) {
  const bool same_shape = t == table && !columns.empty();
  shapeFor(t);
  if (filled_all_ || !same_shape) {
    std::fill(std::begin(kept_.bits), std::end(kept_.bits), ~uint64_t{0});
  } else {
    // A decode that failed left kept_ set: those columns wait for the next endDecode.
    for (size_t w = 0; w < 4; ++w) kept_.bits[w] |= decoded_.bits[w];
  }
  decoded_ = {};
  filled_all_ = false;
}

void TableBlock::endDecode() {
  for (size_t w = 0; w < 4; ++w) {
    for (uint64_t stale = kept_.bits[w] & ~decoded_.bits[w]; stale != 0; stale &= stale - 1) {
      const size_t id = w * 64 + static_cast<size_t>(std::countr_zero(stale));
      if (id >= columns.size()) break;
      columns[id].ints.clear();
      columns[id].hists.clear();
    }
  }
  kept_ = {};
}

void TableBlock::appendLightRows(uint64_t step, size_t n, std::span<const int64_t> values) {
  steps.push_back(u(step));
  const size_t width = lightColumns(table);
  for (size_t c = 0; c < width; ++c) {
    std::vector<int64_t>& col = columns[kFirstStoredColumnId + c].ints;
    for (size_t r = 0; r < n; ++r) col.push_back(values[r * width + c]);
  }
  if (isNestedTable(table)) row_counts.push_back(static_cast<int64_t>(n));
  rows += n;
}

void TableBlock::append(const model::StepRecord& rec) {
  if (lightIndex(table) >= 0) {
    light_scratch_.clear();
    const size_t n = lightRowsOf(table, rec, &light_scratch_);
    appendLightRows(rec.step, n, light_scratch_);
    return;
  }
  steps.push_back(u(rec.step));
  auto col = [this](int id) -> std::vector<int64_t>& { return columns[id].ints; };
  size_t n = 0;
  switch (table) {
    case Table::kSteps:
    case Table::kEvents: break;  // light tables: above
    case Table::kKernels:
      for (const auto& k : rec.kernels) {
        col(3).push_back(u(k.signature));
        col(4).push_back(static_cast<int64_t>(k.phase));
        col(5).push_back(k.count);
        col(6).push_back(k.total_ns);
        columns[7].hists.push_back(k.hist);
      }
      n = rec.kernels.size();
      break;
    case Table::kCollectives:
      for (const auto& c : rec.collectives) {
        col(3).push_back(static_cast<int64_t>(c.op));
        col(4).push_back(u(c.communicator));
        col(5).push_back(c.size_class);
        col(6).push_back(c.peer_rank);
        col(7).push_back(c.count);
        col(8).push_back(u(c.bytes));
        col(9).push_back(c.total_ns);
        col(10).push_back(c.wait_ns);
      }
      n = rec.collectives.size();
      break;
    case Table::kStacks:
      for (const auto& s : rec.stacks) {
        col(3).push_back(u(s.stack_id));
        col(4).push_back(s.samples);
      }
      n = rec.stacks.size();
      break;
  }
  if (isNestedTable(table)) row_counts.push_back(static_cast<int64_t>(n));
  rows += n;
}

void TableBlock::append(model::StepRecord&& rec) {
  if (table != Table::kKernels) {
    append(static_cast<const model::StepRecord&>(rec));
    return;
  }
  steps.push_back(u(rec.step));
  // Sized once per record, then filled: no capacity check per value.
  const size_t n = rec.kernels.size();
  int64_t* col[4];
  for (int c = 0; c < 4; ++c) {
    columns[3 + c].ints.resize(rows + n);
    col[c] = columns[3 + c].ints.data() + rows;
  }
  auto& hists = columns[7].hists;
  hists.resize(rows + n);
  for (size_t i = 0; i < n; ++i) {
    model::KernelStat& k = rec.kernels[i];
    col[0][i] = u(k.signature);
    col[1][i] = static_cast<int64_t>(k.phase);
    col[2][i] = k.count;
    col[3][i] = k.total_ns;
    hists[rows + i] = std::move(k.hist);
  }
  row_counts.push_back(static_cast<int64_t>(rec.kernels.size()));
  rows += rec.kernels.size();
}

namespace {

// Open addressing from a key tuple's hash to its group; equal hashes are told apart by
// the caller's key comparison. Holds groups, not rows: tiny for real blocks.
class GroupTable {
 public:
  // Returns the group whose key hashes to h and satisfies same(group), else adds
  // `fresh` and returns it.
  template <typename Same>
  uint32_t findOrAdd(uint64_t h, uint32_t fresh, Same&& same) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    for (size_t i = slotOf(h);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.group == kEmpty) {
        s = Slot{h, fresh};
        ++size_;
        return fresh;
      }
      if (s.hash == h && same(s.group)) return s.group;
    }
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    uint32_t group = kEmpty;
  };
  size_t slotOf(uint64_t h) const { return static_cast<size_t>((h * 0x9e3779b97f4a7c15ull) >> 32) & mask_; }
  void grow() {
    std::vector<Slot> old(slots_.size() < 64 ? 64 : 2 * slots_.size());
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.group == kEmpty) continue;
      size_t i = slotOf(s.hash);
      while (slots_[i].group != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace

namespace {

// TableBlock::groups() over kKeys key columns: the count a template argument, so that a
// row's key compares and hashes without a loop (it ran once per row of every grouped block
// a scan reads).
template <size_t kKeys>
void groupRows(const int64_t* const (&key_cols)[4], size_t rows, size_t period, RowContext* g) {
  auto sameKey = [&](size_t r, size_t i) {
    for (size_t k = 0; k < kKeys; ++k) {
      if (key_cols[k][r] != key_cols[k][i]) return false;
    }
    return true;
  };
  // Steps repeat their rows in the same order, so row i usually has the key of row
  // i - period (period: the first step's row count). Checked a stretch of rows at a time
  // without a branch per row (the compiler vectorizes it), then row by row: row i - period,
  // then the group that followed row i-1's group last time; the hash table only sees new
  // groups and changes of order.
  constexpr size_t kStretch = 64;
  std::vector<uint32_t> first_row, next;  // per group: its first row; the group that followed it
  GroupTable table_of_groups;
  uint32_t* ids = g->ids.data();
  for (size_t from = 0; from < rows; from += kStretch) {
    const size_t to = std::min(rows, from + kStretch);
    if (from >= period && to - from == kStretch) {
      uint64_t diff = 0;
      for (size_t k = 0; k < kKeys; ++k) {
        const int64_t* now = key_cols[k] + from;
        const int64_t* before = now - period;
        for (size_t j = 0; j < kStretch; ++j) diff |= static_cast<uint64_t>(now[j] ^ before[j]);
      }
      if (diff == 0) {
        for (size_t i = from; i < to; ++i) ids[i] = ids[i - period];
        continue;
      }
    }
    for (size_t i = from; i < to; ++i) {
      if (i >= period && sameKey(i - period, i)) {
        ids[i] = ids[i - period];
        continue;
      }
      if (i > 0) {
        uint32_t guess = next[ids[i - 1]];
        if (guess != UINT32_MAX && sameKey(first_row[guess], i)) {
          ids[i] = guess;
          continue;
        }
      }
      uint64_t h = 1469598103934665603ull;
      for (size_t k = 0; k < kKeys; ++k) h = (h ^ static_cast<uint64_t>(key_cols[k][i])) * 1099511628211ull + (h >> 29);
      uint32_t id = table_of_groups.findOrAdd(h, g->count, [&](uint32_t group) { return sameKey(first_row[group], i); });
      if (id == g->count) {
        ++g->count;
        first_row.push_back(static_cast<uint32_t>(i));
        next.push_back(UINT32_MAX);
      }
      if (i > 0) next[ids[i - 1]] = id;
      ids[i] = id;
    }
  }
}

}  // namespace

RowContext TableBlock::groups() const {
  RowContext g;
  auto keys = groupKeyColumns(table);
  if (keys.empty()) return g;
  g.ids.resize(rows);
  const int64_t* key_cols[4] = {};
  assert(keys.size() <= 4 && "BUG: more group-key columns than groups() handles");
  for (size_t k = 0; k < keys.size(); ++k) key_cols[k] = columns[keys[k]].ints.data();
  const size_t period = row_counts.empty() || row_counts[0] <= 0 ? rows : static_cast<size_t>(row_counts[0]);
  switch (keys.size()) {
    case 1: groupRows<1>(key_cols, rows, period, &g); break;
    case 2: groupRows<2>(key_cols, rows, period, &g); break;
    case 3: groupRows<3>(key_cols, rows, period, &g); break;
    default: groupRows<4>(key_cols, rows, period, &g); break;
  }
  return g;
}

std::vector<size_t> TableBlock::rowOffsets() const {
  std::vector<size_t> off;
  rowOffsets(&off);
  return off;
}

std::pair<size_t, size_t> TableBlock::stepsIn(uint64_t from, uint64_t to) const {
  auto below = [](int64_t step, uint64_t bound) { return static_cast<uint64_t>(step) < bound; };
  // The first index whose step is not below `bound`. Most blocks have every step from their
  // first on, so bound - first is the index: checked against its neighbours, then taken
  // (two binary searches a block were ~5% of a short scan over many ranks).
  auto firstNotBelow = [&](uint64_t bound, size_t from_ix) {
    if (!steps.empty()) {
      const uint64_t guess = bound - std::min(bound, static_cast<uint64_t>(steps.front()));
      const size_t i = static_cast<size_t>(std::min<uint64_t>(guess, steps.size()));
      if (i >= from_ix && (i == steps.size() || !below(steps[i], bound)) && (i == 0 || below(steps[i - 1], bound))) return i;
    }
    return static_cast<size_t>(std::lower_bound(steps.begin() + static_cast<std::ptrdiff_t>(from_ix), steps.end(), bound, below) - steps.begin());
  };
  const size_t first = firstNotBelow(from, 0);
  return {first, firstNotBelow(std::max(to, from), first)};
}

void TableBlock::rowOffsets(std::vector<size_t>* out) const {
  std::vector<size_t>& off = *out;
  off.resize(steps.size() + 1);
  off[0] = 0;
  for (size_t i = 0; i < steps.size(); ++i) off[i + 1] = off[i] + (isNestedTable(table) ? static_cast<size_t>(row_counts[i]) : 1);
}

namespace {

template <typename T>
Status narrow(int64_t v, T* out, const char* field) {
  using L = std::numeric_limits<T>;
  bool fits = std::is_signed_v<T> ? (v >= static_cast<int64_t>(L::min()) && v <= static_cast<int64_t>(L::max()))
                                  : (v >= 0 && static_cast<uint64_t>(v) <= static_cast<uint64_t>(L::max()));
  if (!fits) return Status::corruption(std::string("stored ") + field + " value " + std::to_string(v) + " does not fit its field");
  *out = static_cast<T>(v);
  return Status::ok();
}

}  // namespace

Status recordsFromBlocks(uint32_t rank, uint16_t attempt, const TableBlock (&blocks)[kTableCount], std::vector<model::StepRecord>* out) {
  const TableBlock& st = blocks[tableIndex(Table::kSteps)];
  for (const TableBlock& b : blocks) {
    if (b.steps != st.steps) {
      return Status::corruption(std::string("table ") + tableName(b.table) + " disagrees with table steps on the steps present");
    }
  }
  size_t n = st.steps.size();
  out->assign(n, model::StepRecord{});
  std::vector<size_t> off[kTableCount];
  for (int t = 0; t < kTableCount; ++t) {
    off[t] = blocks[t].rowOffsets();
    if (off[t].back() != blocks[t].rows) return Status::corruption(std::string("table ") + tableName(blocks[t].table) + " row counts disagree with its rows");
  }
  for (size_t i = 0; i < n; ++i) {
    model::StepRecord& r = (*out)[i];
    r.rank = rank;
    r.attempt = attempt;
    r.step = static_cast<uint64_t>(st.steps[i]);
    const auto& c = st.columns;
    r.start_ns = c[3].ints[i];
    r.end_ns = c[4].ints[i];
    r.iter_ns = c[5].ints[i];
    ARGUS_RETURN_IF_ERROR(narrow(c[6].ints[i], &r.flags, "flags"));
    for (int p = 0; p < model::kPhaseColumnCount; ++p) r.phase_ns[p] = c[7 + p].ints[i];

    const auto& kc = blocks[tableIndex(Table::kKernels)].columns;
    for (size_t j = off[1][i]; j < off[1][i + 1]; ++j) {
      model::KernelStat k;
      k.signature = static_cast<uint64_t>(kc[3].ints[j]);
      uint8_t phase = 0;
      ARGUS_RETURN_IF_ERROR(narrow(kc[4].ints[j], &phase, "phase"));
      k.phase = static_cast<model::Phase>(phase);
      ARGUS_RETURN_IF_ERROR(narrow(kc[5].ints[j], &k.count, "count"));
      k.total_ns = kc[6].ints[j];
      k.hist = kc[7].hists[j];
      r.kernels.push_back(std::move(k));
    }
    const auto& cc = blocks[tableIndex(Table::kCollectives)].columns;
    for (size_t j = off[2][i]; j < off[2][i + 1]; ++j) {
      model::CollectiveStat s;
      uint8_t op = 0;
      ARGUS_RETURN_IF_ERROR(narrow(cc[3].ints[j], &op, "op"));
      s.op = static_cast<model::CollectiveOp>(op);
      s.communicator = static_cast<uint64_t>(cc[4].ints[j]);
      ARGUS_RETURN_IF_ERROR(narrow(cc[5].ints[j], &s.size_class, "size_class"));
      ARGUS_RETURN_IF_ERROR(narrow(cc[6].ints[j], &s.peer_rank, "peer_rank"));
      ARGUS_RETURN_IF_ERROR(narrow(cc[7].ints[j], &s.count, "count"));
      s.bytes = static_cast<uint64_t>(cc[8].ints[j]);
      s.total_ns = cc[9].ints[j];
      s.wait_ns = cc[10].ints[j];
      r.collectives.push_back(s);
    }
    const auto& sc = blocks[tableIndex(Table::kStacks)].columns;
    for (size_t j = off[3][i]; j < off[3][i + 1]; ++j) {
      model::StackStat s;
      s.stack_id = static_cast<uint64_t>(sc[3].ints[j]);
      ARGUS_RETURN_IF_ERROR(narrow(sc[4].ints[j], &s.samples, "samples"));
      r.stacks.push_back(s);
    }
    const auto& ec = blocks[tableIndex(Table::kEvents)].columns;
    for (size_t j = off[4][i]; j < off[4][i + 1]; ++j) {
      model::EventRecord e;
      uint8_t kind = 0;
      ARGUS_RETURN_IF_ERROR(narrow(ec[3].ints[j], &kind, "kind"));
      e.kind = static_cast<model::EventKind>(kind);
      e.ts_ns = ec[4].ints[j];
      e.value = static_cast<uint64_t>(ec[5].ints[j]);
      e.name_id = static_cast<uint64_t>(ec[6].ints[j]);
      r.events.push_back(e);
    }
  }
  return Status::ok();
}

}  // namespace argus::storage
