// Chunk layout: docs/format/chunk.md.
#include "storage/chunk_format.h"

// libxxhash's default XXH3_64bits (SSE2), not its x86 dispatch (xxh_x86dispatch.h), which
// picks AVX-512 on these Xeons: half the instructions a chunk, but a scan checks one per
// chunk, and with it avg(compute_ns) over 61 steps x 10,240 ranks ran 0.0159 s on one thread
// against 0.0116 s without. perf put the time lost on the first instructions after each hash
// (parseChunk 19% of the samples, fillAscending's first AVX2 load 11%): a per-call cost of
// switching vector width that instruction counts do not show.
#include <xxhash.h>

#include <bit>
#include <cstdio>
#include <cstring>

#include "base/bytes.h"
#include "storage/column_codec.h"
#include "storage/hist_codec.h"
#include "storage/varint_cursor.h"

namespace argus::storage {

StoredType toStoredType(ColumnType t) {
  switch (t) {
    case ColumnType::kInt64: return StoredType::kInt64;
    case ColumnType::kUInt64: return StoredType::kUInt64;
    case ColumnType::kHistogram: return StoredType::kHistogram;
  }
  return StoredType::kInt64;
}

ColumnType fromStoredType(StoredType t) {
  switch (t) {
    case StoredType::kInt64: return ColumnType::kInt64;
    case StoredType::kUInt64: return ColumnType::kUInt64;
    case StoredType::kHistogram: return ColumnType::kHistogram;
  }
  return ColumnType::kInt64;
}

uint64_t chunkChecksum(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

namespace {
static_assert(std::endian::native == std::endian::little, "f64 sums are stored little-endian");
constexpr uint8_t kHasMinMax = 1;
constexpr uint8_t kIntegralSum = 2;  // sum stored as a zigzag varint instead of an f64

bool integral(double d) { return d >= -9.0e18 && d <= 9.0e18 && d == static_cast<double>(static_cast<int64_t>(d)); }

bool knownFlags(uint8_t flags) { return !(flags & ~(kHasMinMax | kIntegralSum)) && (!(flags & kIntegralSum) || (flags & kHasMinMax)); }

// The header after the checksum, through a VarintCursor: no Status per field (a scan parses
// a header per chunk it reads, ~10 fields). False on any fault, for parseChunk to name.
bool parseHeaderFast(std::string_view body, ChunkView* out) {
  if (body.size() < 3) return false;
  out->version = static_cast<uint8_t>(body[0]);
  out->codec = static_cast<uint8_t>(body[1]);
  const auto type = static_cast<uint8_t>(body[2]);
  if (out->version != kChunkVersion || type > static_cast<uint8_t>(StoredType::kHistogram)) return false;
  out->type = static_cast<StoredType>(type);
  ChunkStats& s = out->stats;
  VarintCursor c(body.substr(3));
  uint64_t span = 0;
  // nextLong for the fields of several bytes (steps, min, max, sum): a load and a
  // mask-and-merge instead of a branch per byte.
  if (!c.next(&s.rows) || s.rows > kMaxChunkRows || !c.nextLong(&s.first_step) || !c.next(&span)) return false;
  s.last_step = s.first_step + span;
  if (s.last_step < s.first_step || c.atEnd()) return false;
  const uint8_t flags = *c.p++;
  if (!knownFlags(flags)) return false;
  s.has_min_max = flags & kHasMinMax;
  s.min = s.max = 0;
  s.sum = 0;
  if (s.has_min_max) {
    if (out->type == StoredType::kUInt64) {
      uint64_t mn = 0, mx = 0;
      if (!c.nextLong(&mn) || !c.nextLong(&mx)) return false;
      s.min = static_cast<int64_t>(mn);
      s.max = static_cast<int64_t>(mx);
    } else if (!c.nextSignedLong(&s.min) || !c.nextSignedLong(&s.max)) {
      return false;
    }
    if (flags & kIntegralSum) {
      int64_t sum = 0;
      if (!c.nextSignedLong(&sum)) return false;
      s.sum = static_cast<double>(sum);
    } else {
      if (c.remaining() < 8) return false;
      std::memcpy(&s.sum, c.p, 8);  // little-endian f64, as ByteReader::getDouble reads it
      c.p += 8;
    }
  }
  uint64_t len = 0;
  if (!c.next(&s.nan_count) || !c.next(&len) || len != c.remaining()) return false;
  out->payload = std::string_view(reinterpret_cast<const char*>(c.p), len);
  return true;
}
}  // namespace

std::string encodeChunk(StoredType type, uint8_t codec, const ChunkStats& s, std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 48);
  ByteWriter w(&out);
  w.putU8(kChunkVersion);
  w.putU8(codec);
  w.putU8(static_cast<uint8_t>(type));
  w.putVarint(s.rows);
  w.putVarint(s.first_step);
  w.putVarint(s.last_step - s.first_step);
  bool int_sum = s.has_min_max && integral(s.sum);
  w.putU8(static_cast<uint8_t>((s.has_min_max ? kHasMinMax : 0) | (int_sum ? kIntegralSum : 0)));
  if (s.has_min_max) {
    if (type == StoredType::kUInt64) {
      w.putVarint(static_cast<uint64_t>(s.min));
      w.putVarint(static_cast<uint64_t>(s.max));
    } else {
      w.putSignedVarint(s.min);
      w.putSignedVarint(s.max);
    }
    if (int_sum) {
      w.putSignedVarint(static_cast<int64_t>(s.sum));
    } else {
      w.putDouble(s.sum);
    }
  }
  w.putVarint(s.nan_count);
  w.putVarint(payload.size());
  w.putBytes(payload);
  w.putFixedLE(chunkChecksum(out), 8);
  return out;
}

Status parseChunk(std::string_view value, ChunkView* out) {
  if (value.size() < 8 + 3) return Status::corruption("chunk value of " + std::to_string(value.size()) + " bytes is too short");
  std::string_view body = value.substr(0, value.size() - 8);
  ByteReader tail(value.substr(value.size() - 8), "chunk checksum");
  uint64_t stored = 0;
  ARGUS_RETURN_IF_ERROR(tail.getFixedLE(&stored, 8));
  uint64_t actual = chunkChecksum(body);
  if (stored != actual) {
    char buf[80];
    snprintf(buf, sizeof buf, "chunk checksum mismatch (stored %016llx, computed %016llx)", static_cast<unsigned long long>(stored),
             static_cast<unsigned long long>(actual));
    return Status::corruption(buf);
  }
  if (parseHeaderFast(body, out)) return Status::ok();
  // The same fields through ByteReader, which names what is wrong and where.
  ByteReader r(body, "chunk header");
  ARGUS_RETURN_IF_ERROR(r.getU8(&out->version));
  if (out->version != kChunkVersion) return Status::corruption("unsupported chunk version " + std::to_string(out->version));
  ARGUS_RETURN_IF_ERROR(r.getU8(&out->codec));
  uint8_t type = 0;
  ARGUS_RETURN_IF_ERROR(r.getU8(&type));
  if (type > static_cast<uint8_t>(StoredType::kHistogram)) return Status::corruption("unknown chunk column type " + std::to_string(type));
  out->type = static_cast<StoredType>(type);
  ChunkStats& s = out->stats;
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&s.rows, kMaxChunkRows, "row count"));
  ARGUS_RETURN_IF_ERROR(r.getVarint(&s.first_step));
  uint64_t span = 0;
  ARGUS_RETURN_IF_ERROR(r.getVarint(&span));
  s.last_step = s.first_step + span;
  if (s.last_step < s.first_step) return Status::corruption("chunk step range overflows");
  uint8_t flags = 0;
  ARGUS_RETURN_IF_ERROR(r.getU8(&flags));
  if (!knownFlags(flags)) return Status::corruption("unknown chunk flags " + std::to_string(flags));
  s.has_min_max = flags & kHasMinMax;
  if (s.has_min_max) {
    if (out->type == StoredType::kUInt64) {
      uint64_t mn = 0, mx = 0;
      ARGUS_RETURN_IF_ERROR(r.getVarint(&mn));
      ARGUS_RETURN_IF_ERROR(r.getVarint(&mx));
      s.min = static_cast<int64_t>(mn);
      s.max = static_cast<int64_t>(mx);
    } else {
      ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&s.min));
      ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&s.max));
    }
    if (flags & kIntegralSum) {
      int64_t sum = 0;
      ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&sum));
      s.sum = static_cast<double>(sum);
    } else {
      ARGUS_RETURN_IF_ERROR(r.getDouble(&s.sum));
    }
  } else {
    s.min = s.max = 0;
    s.sum = 0;
  }
  ARGUS_RETURN_IF_ERROR(r.getVarint(&s.nan_count));
  uint64_t len = 0;
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&len, r.remaining(), "payload length"));
  ARGUS_RETURN_IF_ERROR(r.getBytes(len, &out->payload));
  if (!r.atEnd()) return Status::corruption("chunk: " + std::to_string(r.remaining()) + " bytes between payload and checksum");
  return Status::ok();
}

ChunkContext contextOf(const ChunkView& v) {
  const auto codec = static_cast<CodecId>(v.codec & kCodecIdMask);
  // hist-window says in its first payload byte which context it used (one flagged zstd is
  // no valid chunk: its decoder refuses it).
  const bool window = codec == CodecId::kHistWindow && !(v.codec & kCodecZstdFlag) && !v.payload.empty();
  const uint8_t window_flags = window ? static_cast<uint8_t>(v.payload[0]) : 0;
  ChunkContext c;
  c.groups = codec == CodecId::kGroupDelta || codec == CodecId::kHistSparseGrouped || (window_flags & kHistWindowGrouped);
  c.counts = window_flags & kHistWindowImplied;
  c.hists = codec == CodecId::kHistResidual;
  c.prediction = codec == CodecId::kSumResidual;
  return c;
}

}  // namespace argus::storage
