#include "capture/stacks/frame_table.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace argus::capture::stacks {
namespace {

template <typename T>
T at(const uint8_t* p, uint32_t off) {
  T v;
  std::memcpy(&v, p + off, sizeof v);
  return v;
}

void appendUtf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    if (c >= 0xD800 && c <= 0xDFFF) c = 0xFFFD;  // lone surrogates (surrogateescape names)
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c <= 0x10FFFF) {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->append("\xEF\xBF\xBD");
  }
}

}  // namespace

FrameTable::FrameTable(const PythonRuntime& runtime, MemoryReader& reader, size_t slots)
    : rt_(runtime), reader_(reader), slots_(slots), bad_id_(idOfText(kBadFrameText)) {}

void FrameTable::formatFrame(const std::string& name, const std::string& file, int32_t line, std::string* out) {
  out->assign(name);
  out->append(" (");
  out->append(file);
  out->push_back(':');
  out->append(std::to_string(line));
  out->push_back(')');
}

uint64_t FrameTable::idOfText(std::string_view text) {
  return XXH3_64bits(text.data(), text.size());
}

FrameTable::Slot& FrameTable::slotOf(const FrameKey& key) {
  uint64_t h = key.code ^ (key.filename * 0x9E3779B97F4A7C15ULL) ^ (key.name >> 4) ^ static_cast<uint32_t>(key.firstlineno);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 32;
  return slots_[h & (slots_.size() - 1)];
}

void FrameTable::resolve(const uint64_t* codes, size_t count, FrameKey* keys, uint64_t* ids) {
  const PythonLayout& l = rt_.layout;
  const uint32_t window = l.codeWindowEnd();
  count = std::min(count, MemoryReader::kMaxParts);
  windows_.resize(size_t{window} * count);  // grows to the deepest batch once
  MemoryReader::Part parts[MemoryReader::kMaxParts];
  for (size_t i = 0; i < count; ++i) parts[i] = {codes[i], windows_.data() + i * window, window};
  // One system call for the whole stack; after a bad code object, the rest one by one.
  size_t done = reader_.readMany(parts, count);
  for (size_t i = done + 1; i < count; ++i) {
    if (!reader_.read(parts[i].addr, parts[i].out, parts[i].n)) parts[i].n = 0;
  }
  if (done < count) parts[done].n = 0;
  for (size_t i = 0; i < count; ++i) {
    FrameKey& k = keys[i];
    const uint8_t* w = windows_.data() + i * window;
    k = FrameKey{};
    k.code = codes[i];
    if (parts[i].n == 0 || at<uint64_t>(w, l.ob_type) != rt_.code_type) {
      ++stats_.bad_code;
      ids[i] = bad_id_;
      continue;
    }
    k.filename = at<uint64_t>(w, l.code_filename);
    k.name = at<uint64_t>(w, l.code_qualname >= 0 ? static_cast<uint32_t>(l.code_qualname) : l.code_name);
    k.firstlineno = at<int32_t>(w, l.code_firstlineno);
    k.valid = true;
    Slot& s = slotOf(k);
    if (s.key == k) {
      ++stats_.hits;
      ids[i] = s.id;
      continue;
    }
    ++stats_.misses;
    describe(k, &s.text);
    s.key = k;
    s.id = idOfText(s.text);
    ids[i] = s.id;
  }
}

const std::string& FrameTable::text(const FrameKey& key) {
  if (!key.valid) {
    scratch_.assign(kBadFrameText);
    return scratch_;
  }
  Slot& s = slotOf(key);
  if (s.key == key) return s.text;
  describe(key, &scratch_);
  return scratch_;
}

void FrameTable::describe(const FrameKey& key, std::string* out) {
  bool ok = readString(key.name, &name_);
  ok = readString(key.filename, &file_) && ok;
  if (!ok) ++stats_.bad_strings;
  if (name_.empty()) name_ = "?";
  if (file_.empty()) file_ = "?";
  formatFrame(name_, file_, key.firstlineno, out);
}

bool FrameTable::readString(uint64_t addr, std::string* out) {
  const PythonLayout& l = rt_.layout;
  out->clear();
  uint8_t header[256];
  if (l.compact_header_bytes > sizeof header || !reader_.read(addr, header, l.compact_header_bytes)) return false;
  if (at<uint64_t>(header, l.ob_type) != rt_.unicode_type) return false;
  const int64_t length = at<int64_t>(header, l.unicode_length);
  const uint32_t state = at<uint32_t>(header, l.unicode_state);
  const uint32_t kind = (state >> l.state_kind_shift) & 7;
  const bool compact = (state >> l.state_compact_bit) & 1;
  const bool ascii = (state >> l.state_ascii_bit) & 1;
  if (!compact || length < 0 || (kind != 1 && kind != 2 && kind != 4)) return false;
  const size_t chars = std::min<size_t>(static_cast<size_t>(length), kMaxTextChars);
  uint8_t data[kMaxTextChars * 4];
  const uint64_t data_addr = addr + (ascii ? l.ascii_header_bytes : l.compact_header_bytes);
  if (!reader_.read(data_addr, data, chars * kind)) return false;
  for (size_t i = 0; i < chars; ++i) {
    uint32_t c = kind == 1 ? data[i] : kind == 2 ? at<uint16_t>(data, static_cast<uint32_t>(2 * i)) : at<uint32_t>(data, static_cast<uint32_t>(4 * i));
    appendUtf8(c, out);
  }
  if (static_cast<size_t>(length) > chars) out->append("...");
  return true;
}

}  // namespace argus::capture::stacks
