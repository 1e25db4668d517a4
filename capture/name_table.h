// NameTable: interns strings (kernel, range, mark and collective names) to dense uint32 ids,
// so events carry ids and the per-event path never touches text. Id 0 is the empty name.
// The text is kept for dictionaries (StringDictEntry, KernelDictEntry) and trace dumps.
//
// A source owns one table and interns each distinct name once (the CUPTI source caches
// by the driver's name pointer, importers by the JSON string). Not thread-safe: the owner
// interns and the assembler reads on the same thread, or the owner serializes them.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace argus::capture {

class NameTable {
 public:
  NameTable();
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;
  // Moving keeps every view valid: a deque move hands over its blocks.
  NameTable(NameTable&&) = default;
  NameTable& operator=(NameTable&&) = default;

  // Returns the id of `text`, adding it when new. "" is always 0. Ids are dense (1, 2, ...).
  uint32_t intern(std::string_view text);
  // Returns the id of `text`, or 0 when absent (or empty). Never adds.
  uint32_t find(std::string_view text) const;
  // The text of an id; "" for 0 or an id this table never gave. The view stays valid for
  // the table's life (texts never move).
  std::string_view text(uint32_t id) const;
  // Number of ids given, counting 0: valid ids are [0, size()).
  uint32_t size() const { return static_cast<uint32_t>(texts_.size()); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::deque<std::string> texts_;  // deque: elements never move, so the map's views stay valid
  std::unordered_map<std::string_view, uint32_t, Hash, std::equal_to<>> ids_;
};

}  // namespace argus::capture
