// Fuzzes what `argus dump` runs on stored data: storage::describeKey and describeValue for
// each column family, the key decoders decodeHeadKey / decodeChunkKey, and the HeadDecoder
// that scans and seals run on head entries (records, and a light table's rows).
//
// Input: one selector byte (bits 0-1: 0 meta, 1 head, 2 chunk, 3 an unknown family; bit 2
// set: keep a chunk value's checksum as given instead of fixing it), then the key and the
// value joined by fuzz::kSeparator. Invariants: describing never fails or crashes; a key
// that decodes re-encodes to the same bytes; a head entry decodes or is Corruption, and
// when its records decode, a scan of a light table reads the rows they decode to.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "storage/chunk_dump.h"
#include "storage/chunk_format.h"
#include "storage/head_entry.h"
#include "storage/keys.h"
#include "tests/fuzz/fuzz_util.h"

using namespace argus::storage;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* const kFamilies[] = {kMetaCf, kHeadCf, kChunkCf, "other"};
  const char* cf = kFamilies[data[0] & 3];
  bool keep_checksum = data[0] & 4;
  auto pieces = argus::fuzz::splitPieces(argus::fuzz::asView(data + 1, size - 1), 2);
  std::string_view key = pieces[0];
  std::string value(pieces.size() > 1 ? pieces[1] : std::string_view());
  if (cf == kChunkCf && !keep_checksum && value.size() >= 8) {
    std::string sum;
    argus::ByteWriter(&sum).putFixedLE(chunkChecksum(std::string_view(value).substr(0, value.size() - 8)), 8);
    value.replace(value.size() - 8, 8, sum);
  }

  HeadKey hk;
  if (decodeHeadKey(key, &hk)) FUZZ_CHECK(encodeHeadKey(hk) == key);
  if (cf == kHeadCf) {
    HeadDecoder head(16);
    hk = HeadKey{};
    (void)decodeHeadKey(key, &hk);
    argus::Status s = head.add(hk, value);
    FUZZ_CHECK(s.isOk() || s.isCorruption());
    for (const auto* rec : head.sorted()) FUZZ_CHECK(rec->rank == hk.rank && rec->step - rec->step % 16 == hk.block_base);
    // Light rows: where every record decodes (and matches the rows stored with it), a scan
    // of a light table reads the rows of the records kept.
    for (Table t : kLightTables) {
      HeadDecoder rows(16, t);
      argus::Status r = rows.add(hk, value);
      FUZZ_CHECK(r.isOk() || r.isCorruption());
      if (!s.isOk()) continue;
      FUZZ_CHECK(r.isOk() && rows.sortedRows().size() == head.sorted().size());
      for (size_t i = 0; i < head.sorted().size(); ++i) {
        std::vector<int64_t> want;
        FUZZ_CHECK(lightRowsOf(t, *head.sorted()[i], &want) == rows.sortedRows()[i].rows);
        std::span<const int64_t> got = rows.valuesOf(rows.sortedRows()[i]);
        FUZZ_CHECK(std::equal(got.begin(), got.end(), want.begin(), want.end()));
      }
    }
  }
  ChunkKey ck;
  if (decodeChunkKey(key, &ck)) FUZZ_CHECK(encodeChunkKey(ck) == key);

  std::string k = describeKey(cf, key);
  std::string v = describeValue(cf, key, value);
  FUZZ_CHECK(!k.empty());
  (void)v;
  return 0;
}
