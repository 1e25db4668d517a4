#include "capture/name_table.h"

namespace argus::capture {

NameTable::NameTable() { texts_.emplace_back(); }

uint32_t NameTable::intern(std::string_view text) {
  if (text.empty()) return 0;
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(texts_.size());
  texts_.emplace_back(text);
  ids_.emplace(std::string_view(texts_.back()), id);
  return id;
}

uint32_t NameTable::find(std::string_view text) const {
  if (text.empty()) return 0;
  auto it = ids_.find(text);
  return it == ids_.end() ? 0 : it->second;
}

std::string_view NameTable::text(uint32_t id) const {
  if (id >= texts_.size()) return {};
  return texts_[id];
}

}  // namespace argus::capture
