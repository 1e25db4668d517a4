#include "storage/chunk_reader.h"

#include <algorithm>

#include "storage/hist_codec.h"

namespace argus::storage {
namespace {

Status named(const Status& s, std::string_view key) {
  if (s.isOk()) return s;
  // Anything wrong inside a stored chunk is corruption, whatever the decoder called it.
  return Status::corruption(describeKey(kChunkCf, key) + ": " + s.message());
}

}  // namespace

Status ChunkReader::readStats(std::string_view key, std::string_view value, ChunkStats* stats) {
  ChunkView v;
  ARGUS_RETURN_IF_ERROR(named(parseChunk(value, &v), key));
  *stats = v.stats;
  return Status::ok();
}

Status ChunkReader::decodeColumn(std::string_view key, std::string_view value, ColumnType type, size_t expected_rows,
                                 const RowContext* groups, Column* col, ChunkStats* stats) {
  ChunkView v;
  ARGUS_RETURN_IF_ERROR(named(parseChunk(value, &v), key));
  if (fromStoredType(v.type) != type) return named(Status::corruption("column type disagrees with the schema"), key);
  if (expected_rows != SIZE_MAX && v.stats.rows != expected_rows) {
    return named(Status::corruption("holds " + std::to_string(v.stats.rows) + " rows, the block layout says " + std::to_string(expected_rows)),
                 key);
  }
  if (stats) *stats = v.stats;
  if (type == ColumnType::kHistogram) {
    col->ints.clear();
    return named(decodeHists(v.codec, v.payload, v.stats.rows, groups, &col->hists), key);
  }
  col->hists.clear();
  return named(decodeInts(v.codec, v.payload, v.stats.rows, groups, &col->ints), key);
}

Status ChunkReader::readBlock(const ChunkKey& at, const std::vector<uint8_t>* columns, const ChunkGetter& get, TableBlock* out,
                              uint64_t* chunks_read, const std::string* steps_value) {
  out->reset(at.table);
  ChunkKey key = at;
  std::string value;
  auto fetch = [&](uint8_t column, bool required) -> Status {
    key.column = column;
    Status s = get(encodeChunkKey(key), &value);
    if (s.isNotFound() && required) {
      return Status::corruption(describeKey(kChunkCf, encodeChunkKey(key)) + ": chunk missing while its block layout exists");
    }
    return s;
  };

  std::string steps_key;
  {
    key.column = kStepsColumnId;
    steps_key = encodeChunkKey(key);
    if (steps_value == nullptr) {
      // Absent _steps means "no block" only for the steps table; every other table's layout
      // is read once the steps table's block is known to exist, so there it is damage.
      ARGUS_RETURN_IF_ERROR(fetch(kStepsColumnId, at.table != Table::kSteps));
      steps_value = &value;
    }
    Column c;
    c.type = ColumnType::kUInt64;
    ARGUS_RETURN_IF_ERROR(decodeColumn(steps_key, *steps_value, ColumnType::kUInt64, SIZE_MAX, nullptr, &c));
    ++*chunks_read;
    out->steps = std::move(c.ints);
    for (size_t i = 0; i < out->steps.size(); ++i) {
      uint64_t s = static_cast<uint64_t>(out->steps[i]);
      if (static_cast<int64_t>(s) < 0) {
        return Status::corruption(describeKey(kChunkCf, steps_key) + ": step " + std::to_string(s) + " past the largest storable step (2^63-1)");
      }
      if (s < at.step_base || (i > 0 && out->steps[i] <= out->steps[i - 1])) {
        return Status::corruption(describeKey(kChunkCf, steps_key) + ": steps not ascending inside the block");
      }
    }
  }
  if (isNestedTable(at.table)) {
    ARGUS_RETURN_IF_ERROR(fetch(kRowCountColumnId, true));
    Column c;
    c.type = ColumnType::kUInt64;
    std::string k = encodeChunkKey(key);
    ARGUS_RETURN_IF_ERROR(decodeColumn(k, value, ColumnType::kUInt64, out->steps.size(), nullptr, &c));
    ++*chunks_read;
    uint64_t total = 0;
    for (int64_t n : c.ints) {
      if (n < 0 || static_cast<uint64_t>(n) > kMaxChunkRows || (total += static_cast<uint64_t>(n)) > kMaxChunkRows) {
        return Status::corruption(describeKey(kChunkCf, k) + ": row counts out of range");
      }
    }
    out->row_counts = std::move(c.ints);
    out->rows = total;
  } else {
    out->rows = out->steps.size();
  }

  std::vector<uint8_t> wanted;
  if (columns == nullptr) {
    for (const ColumnDef& d : tableColumns(at.table)) {
      if (d.id >= kFirstStoredColumnId) wanted.push_back(d.id);
    }
  } else {
    wanted = *columns;
  }
  auto keys = groupKeyColumns(at.table);
  std::vector<uint8_t> state(out->columns.size(), 0);  // 0 not loaded, 1 loading, 2 loaded
  bool have_groups = false;
  RowContext groups;

  std::function<Status(uint8_t)> load = [&](uint8_t id) -> Status {
    if (id >= out->columns.size() || id < kFirstStoredColumnId) {
      return Status::corruption(std::string("column ") + std::to_string(id) + " is not in table " + tableName(at.table));
    }
    if (state[id] == 2) return Status::ok();
    if (state[id] == 1) return Status::corruption(std::string("codec dependency cycle at column ") + std::to_string(id));
    state[id] = 1;
    ARGUS_RETURN_IF_ERROR(fetch(id, true));
    std::string k = encodeChunkKey(key);
    std::string v = std::move(value);
    ChunkView view;
    ARGUS_RETURN_IF_ERROR(named(parseChunk(v, &view), k));
    // What the codec predicts from: load those columns first.
    auto codec = static_cast<CodecId>(view.codec & kCodecIdMask);
    bool zstd = view.codec & kCodecZstdFlag;
    uint8_t window_flags = (codec == CodecId::kHistWindow && !zstd && !view.payload.empty()) ? static_cast<uint8_t>(view.payload[0]) : 0;
    bool need_groups = codec == CodecId::kGroupDelta || codec == CodecId::kHistSparseGrouped || (window_flags & 1);
    bool need_counts = window_flags & 2;
    bool need_hists = codec == CodecId::kHistResidual;
    bool need_prediction = codec == CodecId::kSumResidual;
    RowContext ctx;
    std::vector<int64_t> prediction;
    if (need_prediction) {
      const SumPredictor* p = sumPredictorOf(at.table, id);
      if (p == nullptr) return named(Status::corruption("sum-residual on a column without a predictor"), k);
      for (uint8_t t = 0; t < p->nterms; ++t) ARGUS_RETURN_IF_ERROR(load(p->terms[t]));
      out->predict(*p, &prediction);
      ctx.prediction = prediction;
    }
    if (need_groups) {
      if (std::find(keys.begin(), keys.end(), id) != keys.end()) return named(Status::corruption("a group-key column uses a grouped codec"), k);
      if (keys.empty()) return named(Status::corruption("grouped codec in a table without groups"), k);
      if (!have_groups) {
        for (uint8_t kid : keys) ARGUS_RETURN_IF_ERROR(load(kid));
        groups = out->groups();
        have_groups = true;
      }
      ctx.ids = groups.ids;
      ctx.count = groups.count;
    }
    if (need_counts) {
      uint8_t c = countColumnOf(at.table);
      if (c == kNoColumn) return named(Status::corruption("codec needs a count column this table lacks"), k);
      ARGUS_RETURN_IF_ERROR(load(c));
      ctx.counts = out->columns[c].ints;
    }
    if (need_hists) {
      uint8_t h = histColumnOf(at.table);
      if (h == kNoColumn) return named(Status::corruption("codec needs a histogram column this table lacks"), k);
      ARGUS_RETURN_IF_ERROR(load(h));
      ctx.hists = out->columns[h].hists;
    }
    ARGUS_RETURN_IF_ERROR(decodeColumn(k, v, out->columns[id].type, out->rows, &ctx, &out->columns[id]));
    ++*chunks_read;
    state[id] = 2;
    return Status::ok();
  };
  for (uint8_t id : wanted) ARGUS_RETURN_IF_ERROR(load(id));
  return Status::ok();
}

}  // namespace argus::storage
