#include "storage/chunk_dump.h"

#include <cstdio>

#include "base/bytes.h"
#include "model/step_chain.h"
#include "model/step_codec.h"
#include "storage/chunk_format.h"
#include "storage/chunk_reader.h"
#include "storage/column_codec.h"
#include "storage/head_entry.h"
#include "storage/keys.h"
#include "storage/meta_records.h"

namespace argus::storage {
namespace {

std::string hexPreview(std::string_view v, size_t max = 64) {
  std::string out = hexBytes(v.substr(0, max));
  if (v.size() > max) out += "...";
  return out;
}

const char* typeName(StoredType t) {
  switch (t) {
    case StoredType::kInt64: return "int64";
    case StoredType::kUInt64: return "uint64";
    case StoredType::kHistogram: return "histogram";
  }
  return "?";
}

}  // namespace

std::string describeChunk(std::string_view key, std::string_view value, size_t max_values) {
  ChunkView v;
  Status s = parseChunk(value, &v);
  if (!s.isOk()) return "<" + s.toString() + "> " + std::to_string(value.size()) + " bytes 0x" + hexPreview(value);
  const ChunkStats& st = v.stats;
  std::string out = "v" + std::to_string(v.version) + " " + codecName(v.codec) + " " + typeName(v.type) + " rows=" + std::to_string(st.rows) +
                    " steps=" + std::to_string(st.first_step) + ".." + std::to_string(st.last_step);
  if (st.has_min_max) {
    bool u = v.type == StoredType::kUInt64;
    char buf[128];
    snprintf(buf, sizeof buf, " min=%s max=%s sum=%.17g", u ? std::to_string(static_cast<uint64_t>(st.min)).c_str() : std::to_string(st.min).c_str(),
             u ? std::to_string(static_cast<uint64_t>(st.max)).c_str() : std::to_string(st.max).c_str(), st.sum);
    out += buf;
  }
  out += " nan=" + std::to_string(st.nan_count) + " payload=" + std::to_string(v.payload.size()) + "B total=" + std::to_string(value.size()) + "B";
  // Values, when the codec stands alone.
  const ChunkContext needs = contextOf(v);
  if (needs.any()) {
    const char* what = needs.hists        ? "the block's histograms"
                       : needs.prediction ? "its predictor columns"
                                          : "the block's group-key / count columns";
    return out + " values: (coded against " + what + ")";
  }
  Column c;
  Status d = ChunkReader::decodeColumn(key, value, fromStoredType(v.type), SIZE_MAX, nullptr, &c);
  if (!d.isOk()) return out + " values: <" + d.toString() + ">";
  out += " values:";
  size_t n = c.size();
  for (size_t i = 0; i < n && i < max_values; ++i) {
    out += " ";
    if (v.type == StoredType::kHistogram) {
      out += "{";
      bool first = true;
      for (const auto& b : c.hists[i].buckets()) {
        out += (first ? "" : ",") + std::to_string(b.index) + ":" + std::to_string(b.count);
        first = false;
      }
      out += "}";
    } else if (v.type == StoredType::kUInt64) {
      out += std::to_string(static_cast<uint64_t>(c.ints[i]));
    } else {
      out += std::to_string(c.ints[i]);
    }
  }
  if (n > max_values) out += " ... (" + std::to_string(n - max_values) + " more)";
  return out;
}

namespace {

std::string describeRecord(const model::StepRecord& r) {
  std::string out = "start_ns=" + std::to_string(r.start_ns) + " end_ns=" + std::to_string(r.end_ns) + " iter_ns=" + std::to_string(r.iter_ns) +
                    " flags=" + std::to_string(r.flags);
  for (int p = 0; p < model::kPhaseColumnCount; ++p) {
    out += " " + std::string(model::phaseColumnName(static_cast<model::PhaseColumn>(p))) + "=" + std::to_string(r.phase_ns[p]);
  }
  out += " kernels=" + std::to_string(r.kernels.size()) + " collectives=" + std::to_string(r.collectives.size()) +
         " stacks=" + std::to_string(r.stacks.size()) + " events=" + std::to_string(r.events.size());
  for (size_t i = 0; i < r.kernels.size() && i < 3; ++i) {
    const auto& k = r.kernels[i];
    char buf[96];
    snprintf(buf, sizeof buf, " [%016llx %s n=%u total_ns=%lld]", static_cast<unsigned long long>(k.signature), model::phaseName(k.phase), k.count,
             static_cast<long long>(k.total_ns));
    out += buf;
  }
  return out;
}

}  // namespace

std::string describeHeadEntry(std::string_view value) {
  HeadEntryReader r(value);
  if (Status s = r.begin(); !s.isOk()) return "<" + s.message() + "> " + std::to_string(value.size()) + " bytes 0x" + hexPreview(value);
  // Decoded alone, an entry's records decode from its first keyframe on: a delta before it
  // continues a chain from an earlier entry of the same session and block.
  model::StepDecoder decoder;
  bool chained = false;
  model::StepRecord rec;
  std::string out = std::to_string(value.size()) + "B";
  HeadEntryReader::Record in;
  while (!r.atEnd()) {
    Status s = r.next(&in);
    if (!s.isOk()) return out + "\n  <" + s.toString() + ">";
    bool key = model::isKeyframe(in.encoded);
    out += "\n  step=" + std::to_string(in.step) + " attempt=" + std::to_string(in.attempt) + " " + std::to_string(in.encoded.size()) + "B " +
           (key ? "keyframe" : "delta");
    if (in.has_light) {
      out += " (light rows:";
      for (size_t i = 0; i < kLightTableCount; ++i) out += std::string(i > 0 ? ", " : " ") + tableName(kLightTables[i]) + " " + std::to_string(in.light[i].rows);
      out += ")";
    }
    chained = chained || key;
    if (!chained) {
      out += " (continues an earlier entry's chain)";
      continue;
    }
    s = decoder.decode(in.encoded, &rec);
    out += s.isOk() ? " " + describeRecord(rec) : " <" + s.toString() + ">";
    if (!s.isOk()) chained = false;
  }
  return out;
}

std::string describeValue(std::string_view cf, std::string_view key, std::string_view value) {
  if (cf == kChunkCf) return describeChunk(key, value);
  if (cf == kHeadCf) return describeHeadEntry(value);
  if (cf == kMetaCf) return describeMetaValue(key, value);
  return "0x" + hexPreview(value);
}

}  // namespace argus::storage
