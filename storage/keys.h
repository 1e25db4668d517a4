// Keys of the three column families (docs/format/keys.md). Every key is a fixed-width
// big-endian tuple, so RocksDB's default bytewise order is tuple order and a prefix of
// the tuple is a contiguous key range (what scans, seals and range deletes rely on).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/column_batch.h"

namespace argus::storage {

using JobIdKey = uint32_t;

// Column family names.
inline constexpr const char* kMetaCf = "meta";
inline constexpr const char* kHeadCf = "head";
inline constexpr const char* kChunkCf = "chunk";

// Tags of `meta` keys (first byte). Do not renumber.
enum class MetaTag : uint8_t {
  kFormatVersion = 0x01,  // key: tag                       value: u32 BE version
  kBlockSteps = 0x02,     // key: tag                       value: u32 BE block_steps
  kNextJobId = 0x03,      // key: tag                       value: u32 BE next id
  kSessionEpoch = 0x04,   // key: tag                       value: u32 BE opens so far (session ids)
  kJobByName = 0x10,      // key: tag | name bytes          value: JobInfo (meta_records.h)
  kJobData = 0x20,        // key: tag | job u32 | kind | id (job-scoped, one range per job)
};

// Kinds of job-scoped meta entries (after kJobData | job). Do not renumber.
enum class JobDataKind : uint8_t {
  kTopology = 0x01,    // id: rank u32 BE
  kKernelDict = 0x02,  // id: signature u64 BE
  kStackDict = 0x03,   // id: stack id u64 BE
  kStringDict = 0x04,  // id: string id u64 BE
  kFinding = 0x05,     // id: when it was recorded, Unix ns u64 BE (unique within the job)
};

// Reserved column ids of the row layout of a block (never schema columns).
inline constexpr uint8_t kStepsColumnId = 0xF0;    // the steps present, one value per step
inline constexpr uint8_t kRowCountColumnId = 0xF1;  // rows per present step (nested tables)

inline constexpr size_t kHeadKeySize = 4 + 4 + 8 + 8 + 8;         // job|rank|block_base|session|first_seq
inline constexpr size_t kChunkKeySize = 4 + 1 + 1 + 8 + 4 + 2;    // job|table|column|step_base|rank|attempt

// One head entry: records of one rank and block, as one session sent them (head_entry.h).
// Keys are never rewritten: every session has its own id, every entry its first seq.
struct HeadKey {
  uint32_t job = 0;
  uint32_t rank = 0;
  uint64_t block_base = 0;  // the block's first step
  uint64_t session = 0;     // store-wide unique (RocksStore::newSessionId)
  uint64_t first_seq = 0;   // seq of the entry's first record in its session
  bool operator==(const HeadKey&) const = default;
};

struct ChunkKey {
  uint32_t job = 0;
  Table table = Table::kSteps;
  uint8_t column = 0;
  uint64_t step_base = 0;
  uint32_t rank = 0;
  uint16_t attempt = 0;
  bool operator==(const ChunkKey&) const = default;
};

// Head keys. A shorter prefix (job; job|rank; job|rank|block) bounds a range.
std::string encodeHeadKey(const HeadKey& k);
// Writes the kHeadKeySize bytes of k to out (no allocation; the write path).
void encodeHeadKeyTo(const HeadKey& k, char* out);
bool decodeHeadKey(std::string_view key, HeadKey* out);
std::string headPrefix(uint32_t job);
std::string headPrefix(uint32_t job, uint32_t rank);
std::string headPrefix(uint32_t job, uint32_t rank, uint64_t block_base);

// Chunk keys and their prefixes.
std::string encodeChunkKey(const ChunkKey& k);
// The same into *out (replacing its contents; its capacity kept for the next key).
void encodeChunkKey(const ChunkKey& k, std::string* out);
bool decodeChunkKey(std::string_view key, ChunkKey* out);
std::string chunkPrefix(uint32_t job);
std::string chunkPrefix(uint32_t job, Table table, uint8_t column);
std::string chunkPrefix(uint32_t job, Table table, uint8_t column, uint64_t step_base);
std::string chunkPrefix(uint32_t job, Table table, uint8_t column, uint64_t step_base, uint32_t rank);

// Meta keys.
std::string metaKey(MetaTag tag);
std::string jobByNameKey(std::string_view name);
std::string jobDataPrefix(uint32_t job);
std::string jobDataKey(uint32_t job, JobDataKind kind, uint64_t id);

// Returns the smallest key greater than every key starting with `prefix` (prefix + 1 with
// carry), or "" when there is none (prefix all 0xff): the exclusive end of a prefix range.
std::string prefixSuccessor(std::string_view prefix);

// Human-readable tuple of a key of column family `cf` ("job=3 rank=7 step=1024 attempt=0");
// unknown layouts are shown as hex. Never fails.
std::string describeKey(std::string_view cf, std::string_view key);
std::string hexBytes(std::string_view bytes);

}  // namespace argus::storage
