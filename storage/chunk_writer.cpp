#include "storage/chunk_writer.h"

#include <algorithm>

#include "storage/hist_codec.h"
#include "storage/keys.h"

namespace argus::storage {

std::string ChunkWriter::encodeIntColumn(ColumnType type, std::span<const int64_t> values, const RowGroups* groups, uint64_t first_step,
                                         uint64_t last_step) {
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
  EncodedPayload p = encodeInts(values, groups);
  return encodeChunk(toStoredType(type), p.codec, s, p.bytes);
}

std::string ChunkWriter::encodeHistColumn(std::span<const model::DurationHistogram> values, const RowGroups* groups, uint64_t first_step,
                                          uint64_t last_step) {
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
  EncodedPayload p = encodeHists(values, groups);
  return encodeChunk(StoredType::kHistogram, p.codec, s, p.bytes);
}

void ChunkWriter::writeBlock(uint32_t job, uint32_t rank, uint16_t attempt, uint64_t step_base, const TableBlock& b,
                             std::vector<ChunkKV>* out) {
  uint64_t first = static_cast<uint64_t>(b.steps.front());
  uint64_t last = static_cast<uint64_t>(b.steps.back());
  ChunkKey key{job, b.table, kStepsColumnId, step_base, rank, attempt};
  out->push_back({encodeChunkKey(key), encodeIntColumn(ColumnType::kUInt64, b.steps, nullptr, first, last)});
  if (isNestedTable(b.table)) {
    key.column = kRowCountColumnId;
    out->push_back({encodeChunkKey(key), encodeIntColumn(ColumnType::kUInt64, b.row_counts, nullptr, first, last)});
  }
  RowGroups groups = b.groups();
  const RowGroups* g = groups.count > 0 ? &groups : nullptr;
  auto keys = groupKeyColumns(b.table);
  for (const ColumnDef& def : tableColumns(b.table)) {
    if (def.id < kFirstStoredColumnId) continue;
    key.column = def.id;
    const Column& c = b.columns[def.id];
    // Group-key columns must decode without groups: they are what groups are made of.
    bool is_key = std::find(keys.begin(), keys.end(), def.id) != keys.end();
    const RowGroups* cg = is_key ? nullptr : g;
    if (def.type == ColumnType::kHistogram) {
      out->push_back({encodeChunkKey(key), encodeHistColumn(c.hists, cg, first, last)});
    } else {
      out->push_back({encodeChunkKey(key), encodeIntColumn(def.type, c.ints, cg, first, last)});
    }
  }
}

}  // namespace argus::storage
