#include "storage/chunk_reader.h"

#include <algorithm>
#include <cstring>

#include "base/cpu_clones.h"
#include "storage/hist_codec.h"

namespace argus::storage {
namespace {

Status named(const Status& s, std::string_view key) {
  if (s.isOk()) return s;
  // Anything wrong inside a stored chunk is corruption, whatever the decoder called it.
  return Status::corruption(describeKey(kChunkCf, key) + ": " + s.message());
}

// ChunkReader::decodeVerified without the key in its errors (callers name them).
Status decodeParsed(const ChunkView& v, ColumnType type, size_t expected_rows, const RowContext* groups, Column* col) {
  if (fromStoredType(v.type) != type) return Status::corruption("column type disagrees with the schema");
  if (expected_rows != SIZE_MAX && v.stats.rows != expected_rows) {
    return Status::corruption("holds " + std::to_string(v.stats.rows) + " rows, the block layout says " + std::to_string(expected_rows));
  }
  if (type == ColumnType::kHistogram) {
    col->ints.clear();
    return decodeHists(v.codec, v.payload, v.stats.rows, groups, &col->hists);
  }
  col->hists.clear();
  return decodeInts(v.codec, v.payload, v.stats.rows, groups, &col->ints);
}

// Writes first, first + 1, ... to p[0, n): eight at a time in 32-byte lanes, one AVX2
// store each where the CPU has it (two SSE2 stores otherwise). std::iota's scalar loop took
// 4 instructions a step, ~1,000 per dense block read; two-lane SSE2 ~450. Unsigned lanes:
// those past the last step may wrap (steps reach 2^63-1), which for signed ones is undefined.
ARGUS_AVX2_CLONES void fillAscending(int64_t* p, size_t n, int64_t first) {
  using Lanes = uint64_t __attribute__((vector_size(32)));
  const auto f = static_cast<uint64_t>(first);
  Lanes lo = {f, f + 1, f + 2, f + 3}, hi = lo + 4;
  size_t i = 0;
  for (; i + 8 <= n; i += 8, lo += 8, hi += 8) {
    std::memcpy(p + i, &lo, sizeof lo);
    std::memcpy(p + i + 4, &hi, sizeof hi);
  }
  for (; i < n; ++i) p[i] = first + static_cast<int64_t>(i);
}

// Whether a verified header's block has steps first_step..last_step, all of them: rows equal
// span + 1 and steps ascend without repeats. Every chunk of a block has its steps' first,
// last and (one-row-per-step tables) count, so any of them says it (chunk.md).
bool gapless(const ChunkStats& st) { return st.rows > 0 && st.last_step - st.first_step == st.rows - 1; }

// The steps of a gapless block from a verified header; its checksum has vouched for it.
Status stepsFromHeader(const ChunkStats& st, uint64_t step_base, std::vector<int64_t>* steps) {
  if (st.first_step < step_base) return Status::corruption("steps not ascending inside the block");
  if (st.last_step > static_cast<uint64_t>(INT64_MAX)) {
    return Status::corruption("step " + std::to_string(st.last_step) + " past the largest storable step (2^63-1)");
  }
  steps->resize(st.rows);
  fillAscending(steps->data(), steps->size(), static_cast<int64_t>(st.first_step));
  return Status::ok();
}

// The block's steps from its verified layout chunk: ascending, none below step_base or
// past 2^63-1. Without gaps (the usual block) the header says them all and the payload need
// not be decoded.
Status decodeSteps(std::string_view key, const ChunkView& layout, uint64_t step_base, std::vector<int64_t>* steps) {
  if (fromStoredType(layout.type) != ColumnType::kUInt64) return named(Status::corruption("column type disagrees with the schema"), key);
  if (gapless(layout.stats)) return named(stepsFromHeader(layout.stats, step_base, steps), key);
  Column c;
  c.type = ColumnType::kUInt64;
  c.ints = std::move(*steps);  // its capacity, reused
  Status s = ChunkReader::decodeVerified(key, layout, ColumnType::kUInt64, SIZE_MAX, nullptr, &c);
  *steps = std::move(c.ints);
  ARGUS_RETURN_IF_ERROR(s);
  for (size_t i = 0; i < steps->size(); ++i) {
    uint64_t x = static_cast<uint64_t>((*steps)[i]);
    if (static_cast<int64_t>(x) < 0) return named(Status::corruption("step " + std::to_string(x) + " past the largest storable step (2^63-1)"), key);
    if (x < step_base || (i > 0 && (*steps)[i] <= (*steps)[i - 1])) return named(Status::corruption("steps not ascending inside the block"), key);
  }
  return Status::ok();
}

// Loads the wanted columns of one block, each after the columns its codec predicts from.
// Per-thread buffers keep the chunk keys and values' capacity from block to block: a scan
// reads a block per rank, and each allocation here was paid per chunk.
class BlockLoader {
 public:
  // known: a stored column's chunk already fetched and verified (or null).
  BlockLoader(const ChunkKey& at, const ChunkGetter& get, TableBlock* out, uint64_t* chunks_read, const ChunkReader::KnownChunk* known)
      : key_(at), get_(get), out_(out), chunks_read_(chunks_read), known_(known), group_keys_(groupKeyColumns(at.table)) {
    std::fill_n(state_, out->columns.size(), kNotLoaded);
  }
  // A chunk value past kKeepValueBytes is not kept in the per-thread buffers once its block
  // is read: scans run on worker threads that live as long as the process.
  ~BlockLoader() {
    if (!large_) return;
    for (std::string& v : buffers().values) {
      if (v.capacity() > kKeepValueBytes) std::string().swap(v);
    }
  }
  BlockLoader(const BlockLoader&) = delete;
  BlockLoader& operator=(const BlockLoader&) = delete;

  // Fetches chunk `column` of the block (ChunkGetter: valid until the column is fetched
  // again); NotFound passes through unless `required` (then the block's layout exists and
  // the chunk is damage).
  Status fetch(uint8_t column, bool required, std::string_view* value) {
    keyFor(column);
    Status s = get_(buffers().key, &buffers().values[column], value);
    large_ = large_ || buffers().values[column].capacity() > kKeepValueBytes;
    if (s.isNotFound() && required) return Status::corruption(describeKey(kChunkCf, buffers().key) + ": chunk missing while its block layout exists");
    return s;
  }
  // The key of the block's chunk `column`, valid until the next call or fetch.
  const std::string& keyFor(uint8_t column) {
    key_.column = column;
    encodeChunkKey(key_, &buffers().key);
    return buffers().key;
  }

  // Only rows [begin, end) of each column will be read (RowContext::wanted_begin).
  void want(size_t begin, size_t end) {
    wanted_begin_ = hist_begin_ = begin;
    wanted_end_ = hist_end_ = end;
  }
  // The same for histogram columns alone. Unlike integer columns, which may be group keys
  // or the counts a grouped codec reads for every row, a histogram column is read outside
  // the scanned rows only by the codecs of the same rows (hist-residual).
  void wantHists(size_t begin, size_t end) {
    hist_begin_ = begin;
    hist_end_ = end;
  }

  Status load(uint8_t id) {
    const Table table = key_.table;
    if (id >= out_->columns.size() || id < kFirstStoredColumnId) {
      return Status::corruption(std::string("column ") + std::to_string(id) + " is not in table " + tableName(table));
    }
    if (state_[id] == kLoaded) return Status::ok();
    if (state_[id] == kLoading) return Status::corruption(std::string("codec dependency cycle at column ") + std::to_string(id));
    state_[id] = kLoading;
    out_->markDecoded(id);  // before it is written: a failed decode leaves it to the next reset
    // Errors name this chunk's key (loading a dependency below re-encodes the key buffer).
    auto named_here = [&](const Status& s) { return s.isOk() ? s : named(s, keyFor(id)); };
    ChunkView view;
    if (known_ != nullptr && known_->column == id) {
      view = known_->view;
    } else {
      std::string_view v;
      const ColumnDef* def = findColumn(table, id);
      const bool late = def != nullptr && def->added_later;
      Status got = fetch(id, !late, &v);
      if (late && got.isNotFound()) {  // sealed before the column was stored
        out_->columns[id].ints.assign(out_->rows, def->absent);
        state_[id] = kLoaded;
        return Status::ok();
      }
      ARGUS_RETURN_IF_ERROR(got);
      ARGUS_RETURN_IF_ERROR(named_here(parseChunk(v, &view)));
    }
    // What the codec predicts from: load those columns first.
    const ChunkContext needs = contextOf(view);
    RowContext ctx;
    const bool hist = out_->columns[id].type == ColumnType::kHistogram;
    ctx.wanted_begin = hist ? hist_begin_ : wanted_begin_;
    ctx.wanted_end = hist ? hist_end_ : wanted_end_;
    std::vector<int64_t>& prediction = buffers().prediction;
    if (needs.prediction) {
      const SumPredictor* p = sumPredictorOf(table, id);
      if (p == nullptr) return named_here(Status::corruption("sum-residual on a column without a predictor"));
      for (uint8_t t = 0; t < p->nterms; ++t) ARGUS_RETURN_IF_ERROR(load(p->terms[t]));
      out_->predict(*p, &prediction);
      ctx.prediction = prediction;
    }
    if (needs.groups) {
      if (std::find(group_keys_.begin(), group_keys_.end(), id) != group_keys_.end()) {
        return named_here(Status::corruption("a group-key column uses a grouped codec"));
      }
      if (group_keys_.empty()) return named_here(Status::corruption("grouped codec in a table without groups"));
      if (!have_groups_) {
        for (uint8_t kid : group_keys_) ARGUS_RETURN_IF_ERROR(load(kid));
        groups_ = out_->groups();
        have_groups_ = true;
      }
      ctx.ids = groups_.ids;
      ctx.count = groups_.count;
    }
    if (needs.counts) {
      uint8_t c = countColumnOf(table);
      if (c == kNoColumn) return named_here(Status::corruption("codec needs a count column this table lacks"));
      ARGUS_RETURN_IF_ERROR(load(c));
      ctx.counts = out_->columns[c].ints;
    }
    if (needs.hists) {
      uint8_t h = histColumnOf(table);
      if (h == kNoColumn) return named_here(Status::corruption("codec needs a histogram column this table lacks"));
      ARGUS_RETURN_IF_ERROR(load(h));
      ctx.hists = out_->columns[h].hists;
    }
    ARGUS_RETURN_IF_ERROR(named_here(decodeParsed(view, out_->columns[id].type, out_->rows, &ctx, &out_->columns[id])));
    ++*chunks_read_;
    state_[id] = kLoaded;
    return Status::ok();
  }

 private:
  enum : uint8_t { kNotLoaded, kLoading, kLoaded };
  static constexpr size_t kKeepValueBytes = size_t{1} << 20;
  struct Buffers {
    std::string key;          // of the chunk last named
    std::string values[256];  // by column id: what a getter copies out, if it does
    std::vector<int64_t> prediction;
  };
  static Buffers& buffers() {
    thread_local Buffers b;
    return b;
  }

  ChunkKey key_;
  const ChunkGetter& get_;
  TableBlock* out_;
  uint64_t* chunks_read_;
  const ChunkReader::KnownChunk* known_;
  std::span<const uint8_t> group_keys_;
  uint8_t state_[256];
  bool have_groups_ = false;
  bool large_ = false;  // a value buffer past kKeepValueBytes
  RowContext groups_;
  size_t wanted_begin_ = 0, wanted_end_ = SIZE_MAX;
  size_t hist_begin_ = 0, hist_end_ = SIZE_MAX;
};

}  // namespace

Status ChunkReader::verify(std::string_view key, std::string_view value, ChunkView* view) { return named(parseChunk(value, view), key); }

Status ChunkReader::decodeColumn(std::string_view key, std::string_view value, ColumnType type, size_t expected_rows,
                                 const RowContext* groups, Column* col) {
  ChunkView v;
  ARGUS_RETURN_IF_ERROR(verify(key, value, &v));
  return decodeVerified(key, v, type, expected_rows, groups, col);
}

Status ChunkReader::decodeVerified(std::string_view key, const ChunkView& v, ColumnType type, size_t expected_rows, const RowContext* groups,
                                   Column* col) {
  return named(decodeParsed(v, type, expected_rows, groups, col), key);
}

Status ChunkReader::readBlock(const ChunkKey& at, const std::vector<uint8_t>* columns, const ChunkGetter& get, TableBlock* out,
                              uint64_t* chunks_read, const KnownChunk* known, uint64_t from_step, uint64_t to_step) {
  const bool known_layout = known != nullptr && known->column == kStepsColumnId;
  const KnownChunk* known_column = known != nullptr && !known_layout ? known : nullptr;
  if (known_column != nullptr && (isNestedTable(at.table) || known_column->column < kFirstStoredColumnId)) {
    return Status::invalidArgument("readBlock: only a steps-table block takes a known stored column");
  }
  out->beginDecode(at.table);
  if (known_column != nullptr && known_column->column >= out->columns.size()) {
    return Status::invalidArgument("readBlock: known column " + std::to_string(known_column->column) + " is not in the steps table");
  }
  BlockLoader loader(at, get, out, chunks_read, known_column);
  if (known_column != nullptr && gapless(known_column->view.stats)) {
    Status s = stepsFromHeader(known_column->view.stats, at.step_base, &out->steps);
    if (!s.isOk()) return named(s, loader.keyFor(known_column->column));  // the key encoded on failure only
  } else {
    ChunkView fetched;
    const ChunkView* layout = known_layout ? &known->view : nullptr;
    const std::string& key = loader.keyFor(kStepsColumnId);
    if (layout == nullptr) {
      // Absent _steps means "no block" only for the steps table and a block not known to
      // exist; every other table's layout is read once the steps table's block is known to
      // exist, so there it is damage.
      std::string_view v;
      ARGUS_RETURN_IF_ERROR(loader.fetch(kStepsColumnId, at.table != Table::kSteps || known != nullptr, &v));
      ARGUS_RETURN_IF_ERROR(verify(key, v, &fetched));
      layout = &fetched;
    }
    ARGUS_RETURN_IF_ERROR(decodeSteps(key, *layout, at.step_base, &out->steps));
    ++*chunks_read;
  }
  if (isNestedTable(at.table)) {
    std::string_view v;
    ARGUS_RETURN_IF_ERROR(loader.fetch(kRowCountColumnId, true, &v));
    Column c;
    c.type = ColumnType::kUInt64;
    c.ints = std::move(out->row_counts);
    ARGUS_RETURN_IF_ERROR(decodeColumn(loader.keyFor(kRowCountColumnId), v, ColumnType::kUInt64, out->steps.size(), nullptr, &c));
    ++*chunks_read;
    uint64_t total = 0;
    for (int64_t n : c.ints) {
      if (n < 0 || static_cast<uint64_t>(n) > kMaxChunkRows || (total += static_cast<uint64_t>(n)) > kMaxChunkRows) {
        return Status::corruption(describeKey(kChunkCf, loader.keyFor(kRowCountColumnId)) + ": row counts out of range");
      }
    }
    out->row_counts = std::move(c.ints);
    out->rows = total;
  } else {
    out->rows = out->steps.size();
  }

  if (!isNestedTable(at.table) && groupKeyColumns(at.table).empty()) {
    // Row i is step i and no codec here reads other rows of its column: only the wanted
    // steps' rows need decoding.
    const auto [first, last] = out->stepsIn(from_step, to_step);
    loader.want(first, last);
  } else if (isNestedTable(at.table) && (from_step > 0 || to_step < UINT64_MAX)) {
    const auto [first, last] = out->stepsIn(from_step, to_step);
    size_t before = 0, inside = 0;  // rows of the steps before the wanted ones, of the wanted ones
    for (size_t i = 0; i < last; ++i) (i < first ? before : inside) += static_cast<size_t>(out->row_counts[i]);
    loader.wantHists(before, before + inside);
  }
  if (columns != nullptr) {
    for (uint8_t id : *columns) ARGUS_RETURN_IF_ERROR(loader.load(id));
  } else {
    for (const ColumnDef& d : tableColumns(at.table)) {
      if (d.id >= kFirstStoredColumnId) ARGUS_RETURN_IF_ERROR(loader.load(d.id));
    }
  }
  out->endDecode();
  return Status::ok();
}

}  // namespace argus::storage
