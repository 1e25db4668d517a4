#include "query/execution/group_table.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <algorithm>

namespace argus::query {

namespace {

inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 32);
}

constexpr uint64_t kAbsentString = UINT64_MAX;  // codes are indices into strings_

inline uint64_t doubleCode(double d) {
  if (d == 0) d = 0;                   // -0.0 joins 0.0
  if (std::isnan(d)) return 0x7ff8000000000000ull;  // one NaN
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return bits;
}

}  // namespace

GroupTable::GroupTable(std::vector<LogicalType> types) : types_(std::move(types)), nkeys_(types_.size()) {
  assert(nkeys_ <= 64 && "BUG: more than 64 group keys");
  codes_.resize(nkeys_);
  slots_.assign(1024, 0);
  mask_ = slots_.size() - 1;
}

uint64_t GroupTable::stringCode(std::string_view s, bool intern) {
  auto it = string_codes_.find(s);
  if (it != string_codes_.end()) return it->second;
  if (!intern) return kAbsentString;
  strings_.emplace_back(s);
  string_bytes_ += s.size() + sizeof(std::string) * 3;
  return string_codes_.emplace(strings_.back(), strings_.size() - 1).first->second;
}

void GroupTable::encode(size_t k, const Vector& v, size_t count, bool intern) {
  std::vector<uint64_t>& c = codes_[k];
  c.resize(count);
  const uint64_t bit = uint64_t{1} << k;
  if (v.constant) {
    uint64_t code = 0;
    if (v.isValid(0)) {
      switch (v.type) {
        case LogicalType::kDouble: code = doubleCode(v.f64[0]); break;
        case LogicalType::kBoolean: code = v.b8[0]; break;
        case LogicalType::kVarchar: code = stringCode(v.str[0], intern); break;
        case LogicalType::kNull: break;
        default: code = static_cast<uint64_t>(v.i64[0]); break;
      }
    } else {
      for (size_t i = 0; i < count; ++i) row_nulls_[i] |= bit;
    }
    std::fill(c.begin(), c.end(), code);
    return;
  }
  switch (v.type) {
    case LogicalType::kBigInt:
    case LogicalType::kId: std::memcpy(c.data(), v.i64.data(), count * 8); break;
    case LogicalType::kDouble:
      for (size_t i = 0; i < count; ++i) c[i] = doubleCode(v.f64[i]);
      break;
    case LogicalType::kBoolean:
      for (size_t i = 0; i < count; ++i) c[i] = v.b8[i];
      break;
    case LogicalType::kVarchar: {
      std::string_view prev;
      uint64_t prev_code = UINT64_MAX;
      for (size_t i = 0; i < count; ++i) {
        std::string_view s = v.str[i];
        if (prev_code != UINT64_MAX && s == prev) {
          c[i] = prev_code;
          continue;
        }
        c[i] = prev_code = stringCode(s, intern);
        prev = s;
      }
      break;
    }
    default: std::fill(c.begin(), c.end(), 0); break;
  }
  if (!v.validity.empty()) {
    for (size_t i = 0; i < count; ++i) {
      if (!v.validity[i]) {
        row_nulls_[i] |= bit;
        c[i] = 0;  // NULL rows group together whatever their stored value
      }
    }
  }
}

bool GroupTable::sameKey(uint32_t group, size_t row) const {
  if (nulls_[group] != row_nulls_[row]) return false;
  const uint64_t* g = keys_.data() + static_cast<size_t>(group) * nkeys_;
  for (size_t k = 0; k < nkeys_; ++k) {
    if (g[k] != codes_[k][row]) return false;
  }
  return true;
}

void GroupTable::grow() {
  slots_.assign(slots_.size() * 2, 0);
  mask_ = slots_.size() - 1;
  for (uint32_t g = 0; g < ngroups_; ++g) {
    size_t s = hashes_[g] & mask_;
    while (slots_[s] != 0) s = (s + 1) & mask_;
    slots_[s] = g + 1;
  }
}

uint64_t GroupTable::rowHash(size_t row) const {
  uint64_t h = 0x2545f4914f6cdd1dull;
  for (size_t k = 0; k < nkeys_; ++k) h = mix(h, codes_[k][row]);
  return mix(h, row_nulls_[row]);
}

uint32_t GroupTable::probe(size_t row, uint64_t h) {
  size_t s = h & mask_;
  for (;;) {
    uint32_t g = slots_[s];
    if (g == 0) {
      uint32_t fresh = static_cast<uint32_t>(ngroups_++);
      for (size_t k = 0; k < nkeys_; ++k) keys_.push_back(codes_[k][row]);
      nulls_.push_back(row_nulls_[row]);
      hashes_.push_back(h);
      slots_[s] = fresh + 1;
      if (ngroups_ * 2 > slots_.size()) grow();
      return fresh;
    }
    if (hashes_[g - 1] == h && sameKey(g - 1, row)) return g - 1;
    s = (s + 1) & mask_;
  }
}

void GroupTable::encodeRows(const std::vector<const Vector*>& keys, size_t count, bool intern) {
  row_nulls_.assign(count, 0);
  for (size_t k = 0; k < nkeys_; ++k) encode(k, *keys[k], count, intern);
}

void GroupTable::hashRows(const std::vector<const Vector*>& keys, size_t count, bool intern) {
  encodeRows(keys, count, intern);
  row_hashes_.assign(count, 0x2545f4914f6cdd1dull);
  for (size_t k = 0; k < nkeys_; ++k) {
    const uint64_t* c = codes_[k].data();
    for (size_t i = 0; i < count; ++i) row_hashes_[i] = mix(row_hashes_[i], c[i]);
  }
  for (size_t i = 0; i < count; ++i) row_hashes_[i] = mix(row_hashes_[i], row_nulls_[i]);
}

void GroupTable::find(const std::vector<const Vector*>& keys, size_t count, std::vector<uint32_t>& groups) {
  groups.resize(count);
  hashRows(keys, count, false);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t h = row_hashes_[i];
    groups[i] = kNoGroup;
    for (size_t s = h & mask_; slots_[s] != 0; s = (s + 1) & mask_) {
      uint32_t g = slots_[s] - 1;
      if (hashes_[g] == h && sameKey(g, i)) {
        groups[i] = g;
        break;
      }
    }
  }
}

void GroupTable::findOrAdd(const std::vector<const Vector*>& keys, size_t count, std::vector<uint32_t>& groups) {
  groups.resize(count);
  if (nkeys_ == 1 && (types_[0] == LogicalType::kBigInt || types_[0] == LogicalType::kId) && ngroups_ >= kDirectMinGroups && count > 0) {
    const Vector& v = *keys[0];
    if (!v.constant && v.validity.empty()) {  // the values are the codes: no copy
      findDirect<false>(reinterpret_cast<const uint64_t*>(v.i64.data()), count, groups);
    } else {
      encodeRows(keys, count, true);
      findDirect<true>(codes_[0].data(), count, groups);
    }
    return;
  }
  hashRows(keys, count, true);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t h = row_hashes_[i];
    if (i > 0 && h == row_hashes_[i - 1] && sameKey(groups[i - 1], i)) {
      groups[i] = groups[i - 1];
      continue;
    }
    groups[i] = probe(i, h);
  }
}

template <bool kEncoded>
void GroupTable::findDirect(const uint64_t* c, size_t count, std::vector<uint32_t>& groups) {
  // Twice the hash table's slots: the array costs at most twice what the table does.
  const uint64_t want = std::min<uint64_t>(kMaxDirectSlots, slots_.size() * 2);
  if (direct_.size() != want) {
    // Centre the window on this chunk's first key: keys near it (the steps of a range,
    // ranks) land inside. Entries refill as rows look them up again.
    direct_base_ = c[0] - want / 2;  // wraps: offsets are taken modulo 2^64
    direct_.assign(want, 0);
  }
  if constexpr (!kEncoded) {  // the probe reads a row's code and NULL mask from here
    codes_[0].resize(count);
    row_nulls_.resize(count);
  }
  // Locals, not members: the stores into out and direct may alias the vectors' own fields,
  // which would otherwise be reloaded for every row.
  const uint64_t slots = direct_.size(), base = direct_base_;
  const uint64_t* const nulls = row_nulls_.data();
  uint32_t* const direct = direct_.data();
  uint32_t* const out = groups.data();
  for (size_t i = 0; i < count; ++i) {
    const uint64_t off = c[i] - base;
    const bool in_window = off < slots && (!kEncoded || nulls[i] == 0);
    if (in_window) [[likely]] {
      const uint32_t g = direct[off];
      if (g != 0) [[likely]] {
        out[i] = g - 1;
        continue;
      }
    }
    if constexpr (!kEncoded) {
      codes_[0][i] = c[i];
      row_nulls_[i] = 0;
    }
    const uint32_t g = probe(i, rowHash(i));
    if (in_window) direct[off] = g + 1;  // the hash table still owns the group (keyColumn, order)
    out[i] = g;
  }
}

void GroupTable::keyColumn(size_t k, Vector& out) const {
  LogicalType t = types_[k];
  out.reset(t, ngroups_);
  const uint64_t bit = uint64_t{1} << k;
  for (size_t g = 0; g < ngroups_; ++g) {
    uint64_t code = keys_[g * nkeys_ + k];
    if (nulls_[g] & bit) {
      out.setNull(g);
      code = 0;
    }
    switch (t) {
      case LogicalType::kDouble: std::memcpy(&out.f64[g], &code, 8); break;
      case LogicalType::kBoolean: out.b8[g] = static_cast<uint8_t>(code); break;
      case LogicalType::kVarchar: out.str[g] = (nulls_[g] & bit) ? std::string_view() : std::string_view(strings_[code]); break;
      case LogicalType::kNull: out.b8[g] = 0; break;
      default: out.i64[g] = static_cast<int64_t>(code); break;
    }
  }
}

size_t GroupTable::memoryBytes() const {
  size_t n = keys_.capacity() * 8 + nulls_.capacity() * 8 + hashes_.capacity() * 8 + slots_.capacity() * 4 + string_bytes_;
  for (const auto& c : codes_) n += c.capacity() * 8;
  return n + row_nulls_.capacity() * 8 + row_hashes_.capacity() * 8 + direct_.capacity() * 4;
}

}  // namespace argus::query
