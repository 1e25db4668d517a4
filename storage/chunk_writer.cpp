#include "storage/chunk_writer.h"

#include <algorithm>

#include "storage/hist_codec.h"
#include "storage/keys.h"

namespace argus::storage {

std::string ChunkWriter::encodeIntColumn(ColumnType type, std::span<const int64_t> values, const RowContext* groups, uint64_t first_step,
                                         uint64_t last_step, CodecHint* hint) {
  ChunkStats s;
  s.rows = values.size();
  s.first_step = first_step;
  s.last_step = last_step;
  if (!values.empty()) {
    s.has_min_max = true;
    if (type == ColumnType::kUInt64) {
      uint64_t mn = UINT64_MAX, mx = 0;
      for (int64_t v : values) {
        mn = std::min(mn, static_cast<uint64_t>(v));
        mx = std::max(mx, static_cast<uint64_t>(v));
        s.sum += static_cast<double>(static_cast<uint64_t>(v));
      }
      s.min = static_cast<int64_t>(mn);
      s.max = static_cast<int64_t>(mx);
    } else {
      int64_t mn = INT64_MAX, mx = INT64_MIN;
      for (int64_t v : values) {
        mn = std::min(mn, v);
        mx = std::max(mx, v);
        s.sum += static_cast<double>(v);
      }
      s.min = mn;
      s.max = mx;
    }
  }
  EncodedPayload p = encodeInts(values, groups, hint);
  return encodeChunk(toStoredType(type), p.codec, s, p.bytes);
}

std::string ChunkWriter::encodeHistColumn(std::span<const model::DurationHistogram> values, const RowContext* groups, uint64_t first_step,
                                          uint64_t last_step, CodecHint* hint) {
  ChunkStats s;
  s.rows = values.size();
  s.first_step = first_step;
  s.last_step = last_step;
  std::span<const HistRow> rows;
  thread_local std::vector<HistRow> own_rows;
  thread_local std::vector<model::DurationHistogram::Bucket> own_buckets;
  if (groups != nullptr && groups->hist_rows.size() == values.size()) {
    rows = groups->hist_rows;
  } else {
    summarizeHists(values, &own_rows, &own_buckets);
    rows = own_rows;
  }
  int32_t mn = INT32_MAX, mx = INT32_MIN;
  for (const HistRow& r : rows) {
    if (r.buckets == 0) continue;
    s.has_min_max = true;
    mn = std::min(mn, r.first);
    mx = std::max(mx, r.last);
    s.sum += static_cast<double>(r.count);
  }
  if (s.has_min_max) {
    s.min = mn;
    s.max = mx;
  } else {
    s.sum = 0;
  }
  EncodedPayload p = encodeHists(values, groups, hint);
  return encodeChunk(StoredType::kHistogram, p.codec, s, p.bytes);
}

Status ChunkWriter::checkBlock(const TableBlock& b, uint64_t max_rows) {
  max_rows = std::min(max_rows, kMaxChunkRows);
  if (b.steps.size() > max_rows) {
    return Status::invalidArgument(std::string("table ") + tableName(b.table) + ": " + std::to_string(b.steps.size()) +
                                   " steps in one block exceed the per-block cap of " + std::to_string(max_rows));
  }
  for (int64_t s : b.steps) {
    if (s < 0) {
      return Status::invalidArgument(std::string("table ") + tableName(b.table) + ": step " + std::to_string(static_cast<uint64_t>(s)) +
                                     " exceeds the largest storable step " + std::to_string(INT64_MAX));
    }
  }
  uint64_t total = 0;
  for (int64_t n : b.row_counts) total += static_cast<uint64_t>(n);
  if (isNestedTable(b.table) && (total > max_rows || b.rows > max_rows)) {
    return Status::invalidArgument(std::string("table ") + tableName(b.table) + ": " + std::to_string(std::max<uint64_t>(total, b.rows)) +
                                   " rows in one block exceed the per-block cap of " + std::to_string(max_rows));
  }
  return Status::ok();
}

void ChunkWriter::writeBlock(uint32_t job, uint32_t rank, uint16_t attempt, uint64_t step_base, const TableBlock& b,
                             std::vector<ChunkKV>* out, CodecHints* hints) {
  auto hintOf = [&](uint8_t column) { return hints ? hints->of(b.table, column) : nullptr; };
  uint64_t first = static_cast<uint64_t>(b.steps.front());
  uint64_t last = static_cast<uint64_t>(b.steps.back());
  ChunkKey key{job, b.table, kStepsColumnId, step_base, rank, attempt};
  out->push_back({encodeChunkKey(key), encodeIntColumn(ColumnType::kUInt64, b.steps, nullptr, first, last, hintOf(kStepsColumnId))});
  if (isNestedTable(b.table)) {
    key.column = kRowCountColumnId;
    out->push_back({encodeChunkKey(key), encodeIntColumn(ColumnType::kUInt64, b.row_counts, nullptr, first, last, hintOf(kRowCountColumnId))});
  }
  // Contexts, ordered so decoding never cycles: group keys use none; the count column uses
  // groups; the histogram column uses groups and counts; every other column may also use
  // the histograms (kernels.total_ns is coded against them). One RowContext serves all:
  // each column sees only the members its place in that order allows.
  RowContext ctx = b.groups();
  uint8_t count_col = countColumnOf(b.table), hist_col = histColumnOf(b.table);
  std::span<const int64_t> counts;
  std::span<const model::DurationHistogram> hists;
  // Per-thread scratch, capacity reused.
  thread_local std::vector<HistRow> hist_rows;
  thread_local std::vector<model::DurationHistogram::Bucket> hist_buckets;
  hist_rows.clear();
  hist_buckets.clear();
  if (count_col != kNoColumn) counts = b.columns[count_col].ints;
  if (hist_col != kNoColumn) {
    hists = b.columns[hist_col].hists;
    summarizeHists(hists, &hist_rows, &hist_buckets);
  }
  auto keys = groupKeyColumns(b.table);
  for (const ColumnDef& def : tableColumns(b.table)) {
    if (def.id < kFirstStoredColumnId) continue;
    key.column = def.id;
    const Column& c = b.columns[def.id];
    const RowContext* column_ctx = &ctx;
    ctx.counts = {};
    ctx.hists = {};
    ctx.hist_rows = {};
    ctx.hist_buckets = {};
    ctx.prediction = {};
    if (std::find(keys.begin(), keys.end(), def.id) != keys.end()) {
      column_ctx = nullptr;
    } else if (def.id == hist_col) {
      ctx.counts = counts;
      ctx.hist_rows = hist_rows;  // the column's own summary, not a context column
      ctx.hist_buckets = hist_buckets;
    } else if (def.id != count_col) {
      ctx.hists = hists;
      ctx.hist_rows = hist_rows;
      ctx.hist_buckets = hist_buckets;
    }
    std::vector<int64_t> prediction;
    if (const SumPredictor* p = sumPredictorOf(b.table, def.id); p && p->written) {
      b.predict(*p, &prediction);
      ctx.prediction = prediction;
      column_ctx = &ctx;
    }
    if (def.type == ColumnType::kHistogram) {
      out->push_back({encodeChunkKey(key), encodeHistColumn(c.hists, column_ctx, first, last, hintOf(def.id))});
    } else {
      out->push_back({encodeChunkKey(key), encodeIntColumn(def.type, c.ints, column_ctx, first, last, hintOf(def.id))});
    }
  }
}

}  // namespace argus::storage
