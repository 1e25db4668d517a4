// Key layouts: docs/format/keys.md.
#include "storage/keys.h"

#include <cstdio>

#include "base/bytes.h"

namespace argus::storage {
namespace {

void putBE(std::string* out, uint64_t v, int bytes) { ByteWriter(out).putFixedBE(v, bytes); }

uint64_t getBE(std::string_view s, size_t off, int bytes) { return getFixedBEAt(s.data() + off, bytes); }

bool validTable(uint8_t t) { return t >= static_cast<uint8_t>(Table::kSteps) && t <= static_cast<uint8_t>(Table::kEvents); }

}  // namespace

std::string encodeHeadKey(const HeadKey& k) {
  std::string out(kHeadKeySize, '\0');
  encodeHeadKeyTo(k, out.data());
  return out;
}

void encodeHeadKeyTo(const HeadKey& k, char* out) {
  out = putFixedBEAt(out, k.job, 4);
  out = putFixedBEAt(out, k.rank, 4);
  out = putFixedBEAt(out, k.block_base, 8);
  out = putFixedBEAt(out, k.session, 8);
  putFixedBEAt(out, k.first_seq, 8);
}

bool decodeHeadKey(std::string_view key, HeadKey* out) {
  if (key.size() != kHeadKeySize) return false;
  out->job = static_cast<uint32_t>(getBE(key, 0, 4));
  out->rank = static_cast<uint32_t>(getBE(key, 4, 4));
  out->block_base = getBE(key, 8, 8);
  out->session = getBE(key, 16, 8);
  out->first_seq = getBE(key, 24, 8);
  return true;
}

std::string headPrefix(uint32_t job) {
  std::string out;
  putBE(&out, job, 4);
  return out;
}

std::string headPrefix(uint32_t job, uint32_t rank) {
  std::string out = headPrefix(job);
  putBE(&out, rank, 4);
  return out;
}

std::string headPrefix(uint32_t job, uint32_t rank, uint64_t block_base) {
  std::string out = headPrefix(job, rank);
  putBE(&out, block_base, 8);
  return out;
}

std::string encodeChunkKey(const ChunkKey& k) {
  std::string out;
  encodeChunkKey(k, &out);
  return out;
}

void encodeChunkKey(const ChunkKey& k, std::string* out) {
  out->resize(kChunkKeySize);
  char* p = putFixedBEAt(out->data(), k.job, 4);
  *p++ = static_cast<char>(k.table);
  *p++ = static_cast<char>(k.column);
  p = putFixedBEAt(p, k.step_base, 8);
  p = putFixedBEAt(p, k.rank, 4);
  putFixedBEAt(p, k.attempt, 2);
}

bool decodeChunkKey(std::string_view key, ChunkKey* out) {
  if (key.size() != kChunkKeySize) return false;
  uint8_t table = static_cast<uint8_t>(key[4]);
  if (!validTable(table)) return false;
  out->job = static_cast<uint32_t>(getBE(key, 0, 4));
  out->table = static_cast<Table>(table);
  out->column = static_cast<uint8_t>(key[5]);
  out->step_base = getBE(key, 6, 8);
  out->rank = static_cast<uint32_t>(getBE(key, 14, 4));
  out->attempt = static_cast<uint16_t>(getBE(key, 18, 2));
  return true;
}

namespace {

// The first `bytes` of the chunk key of `k`: one definition of the layout for keys and their
// prefixes.
std::string chunkKeyPrefix(const ChunkKey& k, size_t bytes) {
  std::string out;
  encodeChunkKey(k, &out);
  out.resize(bytes);
  return out;
}

}  // namespace

std::string chunkPrefix(uint32_t job) { return chunkKeyPrefix(ChunkKey{job}, 4); }

std::string chunkPrefix(uint32_t job, Table table, uint8_t column) { return chunkKeyPrefix(ChunkKey{job, table, column}, 4 + 1 + 1); }

std::string chunkPrefix(uint32_t job, Table table, uint8_t column, uint64_t step_base) {
  return chunkKeyPrefix(ChunkKey{job, table, column, step_base}, 4 + 1 + 1 + 8);
}

std::string chunkPrefix(uint32_t job, Table table, uint8_t column, uint64_t step_base, uint32_t rank) {
  return chunkKeyPrefix(ChunkKey{job, table, column, step_base, rank}, 4 + 1 + 1 + 8 + 4);
}

std::string metaKey(MetaTag tag) { return std::string(1, static_cast<char>(tag)); }

std::string jobByNameKey(std::string_view name) {
  std::string out = metaKey(MetaTag::kJobByName);
  out.append(name);
  return out;
}

std::string jobDataPrefix(uint32_t job) {
  std::string out = metaKey(MetaTag::kJobData);
  putBE(&out, job, 4);
  return out;
}

std::string jobDataKey(uint32_t job, JobDataKind kind, uint64_t id) {
  std::string out = jobDataPrefix(job);
  out.push_back(static_cast<char>(kind));
  if (kind == JobDataKind::kTopology) {
    putBE(&out, id, 4);
  } else {
    putBE(&out, id, 8);
  }
  return out;
}

std::string prefixSuccessor(std::string_view prefix) {
  std::string out(prefix);
  while (!out.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(out.back());
    if (last != 0xff) {
      ++last;
      return out;
    }
    out.pop_back();
  }
  return out;
}

std::string hexBytes(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

namespace {

std::string columnLabel(Table table, uint8_t column) {
  if (column == kStepsColumnId) return "_steps";
  if (column == kRowCountColumnId) return "_rows";
  if (const ColumnDef* c = findColumn(table, column)) return std::string(c->name);
  return "#" + std::to_string(column);
}

std::string describeMetaKey(std::string_view key) {
  if (key.empty()) return "meta <empty key>";
  switch (static_cast<MetaTag>(key[0])) {
    case MetaTag::kFormatVersion:
      if (key.size() == 1) return "meta format_version";
      break;
    case MetaTag::kBlockSteps:
      if (key.size() == 1) return "meta block_steps";
      break;
    case MetaTag::kNextJobId:
      if (key.size() == 1) return "meta next_job_id";
      break;
    case MetaTag::kSessionEpoch:
      if (key.size() == 1) return "meta session_epoch";
      break;
    case MetaTag::kJobByName:
      return "meta job name=" + std::string(key.substr(1));
    case MetaTag::kJobData: {
      if (key.size() < 6) break;
      uint32_t job = static_cast<uint32_t>(getBE(key, 1, 4));
      auto kind = static_cast<JobDataKind>(key[5]);
      std::string head = "meta job=" + std::to_string(job) + " ";
      if (kind == JobDataKind::kTopology && key.size() == 10) {
        return head + "topology rank=" + std::to_string(getBE(key, 6, 4));
      }
      if (kind == JobDataKind::kFinding && key.size() == 14) return head + "finding recorded_ns=" + std::to_string(getBE(key, 6, 8));
      if (key.size() == 14) {
        const char* what = kind == JobDataKind::kKernelDict  ? "kernel signature="
                           : kind == JobDataKind::kStackDict ? "stack id="
                           : kind == JobDataKind::kStringDict ? "string id="
                                                              : nullptr;
        if (what) {
          char buf[24];
          snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(getBE(key, 6, 8)));
          return head + what + buf;
        }
      }
      break;
    }
  }
  return "meta 0x" + hexBytes(key);
}

}  // namespace

std::string describeKey(std::string_view cf, std::string_view key) {
  if (cf == kHeadCf) {
    HeadKey k;
    if (decodeHeadKey(key, &k)) {
      return "head job=" + std::to_string(k.job) + " rank=" + std::to_string(k.rank) + " block=" + std::to_string(k.block_base) +
             " session=" + std::to_string(k.session) + " seq=" + std::to_string(k.first_seq);
    }
    return "head 0x" + hexBytes(key);
  }
  if (cf == kChunkCf) {
    ChunkKey k;
    if (decodeChunkKey(key, &k)) {
      return "chunk job=" + std::to_string(k.job) + " table=" + tableName(k.table) + " column=" + columnLabel(k.table, k.column) +
             " step_base=" + std::to_string(k.step_base) + " rank=" + std::to_string(k.rank) + " attempt=" + std::to_string(k.attempt) +
             " (0x" + hexBytes(key) + ")";
    }
    return "chunk 0x" + hexBytes(key);
  }
  if (cf == kMetaCf) return describeMetaKey(key);
  return std::string(cf) + " 0x" + hexBytes(key);
}

}  // namespace argus::storage
