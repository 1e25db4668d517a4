// Head entries: the values of the `head` column family (docs/format/keys.md, "head").
//
// An ingest session stores the records of a StepBatch exactly as they arrived (encoded,
// docs/wire/step-record.md), one entry per block they fall in: nothing is re-encoded on
// the acknowledged path. The records of one (session, block) form delta chains that start
// with a keyframe (model/step_chain.h), so the entries of one block decode on their own.
//
// Value: u8 kHeadEntryVersion (2), then per record in seq order:
//   varint step | varint attempt | varint length | `length` bytes of the record's encoding |
//   the record's light part: varint length, a section per light table (light_rows.h)
// Version 1 (written before December 2026, still read) has no light rows.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/status.h"
#include "model/step_codec.h"
#include "model/step_record.h"
#include "storage/head_index.h"
#include "storage/keys.h"
#include "storage/light_rows.h"

namespace argus::storage {

inline constexpr uint8_t kHeadEntryVersion = 2;

// Builds an entry value at the end of *out: begin it, then append its records: `encoded`
// and the light rows of `rec`, the record it decodes to.
void beginHeadEntry(std::string* out);
void appendHeadRecord(std::string* out, std::string_view encoded, const model::StepRecord& rec);

// Walks the records of one entry value (the layout above), checking bounds; what the
// records decode to is the caller's business.
class HeadEntryReader {
 public:
  struct Record {
    uint64_t step = 0;
    uint16_t attempt = 0;
    std::string_view encoded;
    bool has_light = false;  // version 2: `light` holds the record's light rows
    LightSection light[kLightTableCount]{};
  };
  explicit HeadEntryReader(std::string_view value) : value_(value), r_(value, "head entry") {}
  // The version byte: Corruption for an empty value or an unknown version.
  Status begin();
  bool atEnd() const { return r_.atEnd(); }
  // REQUIRES: begin() was OK and !atEnd(). Corruption for a truncated or malformed record.
  Status next(Record* out);

 private:
  std::string_view value_;
  ByteReader r_;
  uint8_t version_ = 0;
};

// What the head index keeps of an entry (head_index.h): the steps of its records and
// whether the first is a keyframe. A malformed value gives an entry that starts no chain
// and spans every step (it breaks its block's order: reads walk the block from its start).
HeadIndex::Entry headIndexEntry(const HeadKey& key, std::string_view value);

// Decodes the head entries of one (job, rank), fed in key order, into records: one per
// (step, attempt), the latest delivery winning (sessions sort by age). Keeps its records
// between uses (clear()), so a steady seal or scan reuses their capacity.
//
// Light rows: a decoder made for a light table (steps, events) keeps that table's rows, not
// records, and takes a record's from its entry (version 2) without decoding the record,
// which costs several times more (docs/format/keys.md): a scan of those tables over
// unsealed steps reads the rows alone. A record without light rows (version 1) is decoded
// and its rows computed.
// A record decoded as it is read is checked against the light rows it came with; one decoded
// later because a record without rows continued its chain (mixed versions) is not.
//
// Orphans: group commits run on several threads, so after a crash an entry can be in the
// WAL while an earlier entry of its session is not. Neither was acknowledged (acks follow
// submission order), and the client re-sends both in a new session; but the later one's
// delta records lost the start of their chain. A record that is a delta without its
// predecessor (the previous entry of the session and block did not end just before it)
// is skipped and counted as orphaned, up to the next keyframe.
//
// Lazy: a record outside [from, to) is decoded only when a later record of its chain in
// range needs it, so a read of a block's newest steps decodes from the last keyframe
// before them (senders start one every model::kChainSteps steps), not from the block's
// first step.
class HeadDecoder {
 public:
  // Keeps records, or with `rows_of` a light table that table's rows (another table: records).
  explicit HeadDecoder(uint32_t block_steps, std::optional<Table> rows_of = std::nullopt);
  struct RowsAt {
    uint64_t step;
    uint16_t attempt;
    size_t rows;    // of the table, for this record
    size_t offset;  // where its values (rows x lightColumns, row-major) begin: valuesOf()
  };

  void clear();
  // Keeps the records of the entry with from <= step < to, decoding them and the records
  // of their chains before them. A record decoded that does not decode, or whose step,
  // attempt, rank or block contradicts its entry, is Corruption naming the key (the decoder
  // then holds only the entries before it). Records never needed are not checked.
  Status add(const HeadKey& key, std::string_view value, uint64_t from_step = 0, uint64_t to_step = UINT64_MAX);
  // Decodes and checks every record of the entry, keeping none (argus verify).
  Status check(const HeadKey& key, std::string_view value);
  // The kept records sorted by (step, attempt), duplicates dropped. Valid until the next
  // add() or clear(); the records may be moved from. A decoder of records only.
  std::vector<model::StepRecord*>& sorted();
  // The same of the rows kept, a record's at a time. A decoder of rows only.
  const std::vector<RowsAt>& sortedRows();
  std::span<const int64_t> valuesOf(const RowsAt& r) const { return {values_.data() + r.offset, r.rows * row_width_}; }
  // Records decoded (kept or not) since clear(): with the whole range, every record.
  uint64_t decoded() const { return decoded_; }
  // Records skipped since clear(): deltas whose chain start was never written (above).
  uint64_t orphaned() const { return orphaned_; }

 private:
  struct Deferred {  // a record of the chain not decoded yet: its bytes in deferred_bytes_
    HeadKey key;     // of its entry
    uint64_t step;
    uint16_t attempt;
    size_t offset, size;
  };
  Status read(const HeadKey& key, std::string_view value, uint64_t from_step, uint64_t to_step, bool decode_all);
  void defer(const HeadKey& key, const HeadEntryReader::Record& in);
  void dropDeferred();
  // Decodes the next record of the chain into the first free slot, kept when `keep`.
  Status decode(const HeadKey& key, const HeadEntryReader::Record& in, bool keep);
  Status keepRows(uint64_t step, uint16_t attempt, const LightSection& section);
  void keepRows(const model::StepRecord& rec);
  void noteKept(uint64_t step, uint16_t attempt, size_t offset);
  // Corruption unless the light rows the record came with are the ones it decodes to.
  Status checkLight(const HeadKey& key, const HeadEntryReader::Record& in, const model::StepRecord& rec);
  static Status corrupt(const HeadKey& key, const std::string& what);

  uint32_t block_steps_;
  int light_ix_ = -1;     // of the table whose rows it keeps, in kLightTables; -1: records
  size_t row_width_ = 0;  // lightColumns of that table
  model::StepDecoder decoder_;
  // The chain's keyframe was seen: decoder_ plus the deferred records hold the history the
  // next record of the chain needs.
  bool have_chain_ = false;
  std::vector<Deferred> deferred_;  // since the last record decoded, in chain order
  std::string deferred_bytes_;      // copies: an entry's value lives only while it is read
  uint64_t chain_session_ = 0, chain_block_ = 0, chain_next_seq_ = 0;
  std::vector<model::StepRecord> records_;  // [0, kept_) hold kept records; capacity reused
  size_t kept_ = 0;
  uint64_t decoded_ = 0;
  uint64_t orphaned_ = 0;
  std::vector<model::StepRecord*> sorted_;
  std::vector<RowsAt> rows_;     // a decoder of rows: what it kept, sorted by sortedRows()
  std::vector<int64_t> values_;  // their values
  bool rows_sorted_ = true;
  std::vector<int64_t> stored_, computed_;  // checkLight's
};

}  // namespace argus::storage
