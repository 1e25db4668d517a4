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
  int32_t mn = INT32_MAX, mx = INT32_MIN;
  for (const auto& h : values) {
    if (h.empty()) continue;
    s.has_min_max = true;
    mn = std::min(mn, h.buckets().front().index);
    mx = std::max(mx, h.buckets().back().index);
    s.sum += static_cast<double>(h.count());
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
  // the histograms (kernels.total_ns is coded against them).
  RowContext groups = b.groups();
  RowContext with_counts = groups;
  RowContext with_hists = groups;
  uint8_t count_col = countColumnOf(b.table), hist_col = histColumnOf(b.table);
  if (count_col != kNoColumn) with_counts.counts = b.columns[count_col].ints;
  std::vector<int64_t> hist_predictions;
  if (hist_col != kNoColumn) {
    with_hists.hists = b.columns[hist_col].hists;
    hist_predictions.reserve(with_hists.hists.size());
    for (const auto& h : with_hists.hists) hist_predictions.push_back(histPrediction(h));
    with_hists.hist_predictions = hist_predictions;
  }
  auto keys = groupKeyColumns(b.table);
  for (const ColumnDef& def : tableColumns(b.table)) {
    if (def.id < kFirstStoredColumnId) continue;
    key.column = def.id;
    const Column& c = b.columns[def.id];
    const RowContext* ctx = &with_hists;
    if (std::find(keys.begin(), keys.end(), def.id) != keys.end()) {
      ctx = nullptr;
    } else if (def.id == count_col) {
      ctx = &groups;
    } else if (def.id == hist_col) {
      ctx = &with_counts;
    }
    RowContext predicted;
    std::vector<int64_t> prediction;
    if (const SumPredictor* p = sumPredictorOf(b.table, def.id)) {
      prediction = b.predict(*p);
      predicted = ctx ? *ctx : RowContext{};
      predicted.prediction = prediction;
      ctx = &predicted;
    }
    if (def.type == ColumnType::kHistogram) {
      out->push_back({encodeChunkKey(key), encodeHistColumn(c.hists, ctx, first, last, hintOf(def.id))});
    } else {
      out->push_back({encodeChunkKey(key), encodeIntColumn(def.type, c.ints, ctx, first, last, hintOf(def.id))});
    }
  }
}

}  // namespace argus::storage
