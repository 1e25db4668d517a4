// GroupTable: maps group keys to dense group ids, a chunk at a time. Each key column is first
// encoded into 64-bit codes (integers and IDs as they are, DOUBLE by bits after folding -0.0
// into 0.0 and every NaN into one, BOOLEAN 0/1, VARCHAR by interning), NULLs into a bit mask
// per row; then rows are hashed column by column and probed into an open-addressing table.
// Consecutive rows with the same key (a rank's rows arrive together) skip the probe. A single
// integer key (step, rank) with many groups first looks in a direct array over a window of
// key values (twice the table's slots, at most 65,536), so rows whose keys change every row
// (GROUP BY step over rows in rank order) skip hashing and probing too, and a key column
// without NULLs is read in place rather than encoded.
#pragma once

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "query/common/vector.h"

namespace argus::query {

class GroupTable {
 public:
  // REQUIRES: types.size() <= 64.
  explicit GroupTable(std::vector<LogicalType> types);

  // keys[k]: key column k, dense or constant, `count` rows. Writes the group of each row
  // into groups (size count), adding new groups.
  void findOrAdd(const std::vector<const Vector*>& keys, size_t count, std::vector<uint32_t>& groups);
  // As findOrAdd, but adds nothing: a row whose key is not in the table gets kNoGroup.
  void find(const std::vector<const Vector*>& keys, size_t count, std::vector<uint32_t>& groups);
  static constexpr uint32_t kNoGroup = UINT32_MAX;
  size_t size() const { return ngroups_; }
  // Key column k of every group, in group order (strings point into this table).
  void keyColumn(size_t k, Vector& out) const;
  size_t memoryBytes() const;

 private:
  // Fills codes_ and row_nulls_ for `count` rows. intern: give strings not seen before a
  // code (else they get kAbsentString, which no key has).
  void encodeRows(const std::vector<const Vector*>& keys, size_t count, bool intern);
  // encodeRows, then row_hashes_.
  void hashRows(const std::vector<const Vector*>& keys, size_t count, bool intern);
  void encode(size_t k, const Vector& v, size_t count, bool intern);
  uint64_t stringCode(std::string_view s, bool intern);
  void grow();
  bool sameKey(uint32_t group, size_t row) const;
  uint64_t rowHash(size_t row) const;
  // The group of row `row` with hash h, added when new.
  uint32_t probe(size_t row, uint64_t h);
  // findOrAdd for one BIGINT/ID key through direct_, over its codes c. kEncoded: c is
  // codes_[0], NULL masks in row_nulls_ (encodeRows); else the key's own values, no NULLs.
  template <bool kEncoded>
  void findDirect(const uint64_t* c, size_t count, std::vector<uint32_t>& groups);

  std::vector<LogicalType> types_;
  size_t nkeys_;
  size_t ngroups_ = 0;
  // Per group: key codes (ngroups x nkeys), NULL mask, hash.
  std::vector<uint64_t> keys_;
  std::vector<uint64_t> nulls_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> slots_;  // group + 1; 0 is empty
  size_t mask_ = 0;
  // VARCHAR interning: code -> string (stable addresses) and back.
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, uint64_t> string_codes_;  // keys view strings_
  size_t string_bytes_ = 0;
  // One integer key: group + 1 of key direct_base_ + i (0: not looked up yet); used once
  // the table holds kDirectMinGroups groups (fewer: the probe is cheap and memory tight).
  static constexpr uint64_t kMaxDirectSlots = 1 << 16;
  static constexpr size_t kDirectMinGroups = 256;
  std::vector<uint32_t> direct_;
  uint64_t direct_base_ = 0;
  // Per chunk scratch.
  std::vector<std::vector<uint64_t>> codes_;
  std::vector<uint64_t> row_nulls_;
  std::vector<uint64_t> row_hashes_;
};

}  // namespace argus::query
