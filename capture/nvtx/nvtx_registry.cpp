#include "capture/nvtx/nvtx_registry.h"

#include <cstring>

namespace argus::capture::nvtx {

Registry::Registry() : domain_entries_(new Entry[kMaxDomains]), string_entries_(new Entry[kMaxStrings]) {}

Registry::~Registry() {
  for (uint32_t i = 0; i < kMaxDomains; ++i) delete[] domain_entries_[i].text.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < kMaxStrings; ++i) delete[] string_entries_[i].text.load(std::memory_order_relaxed);
}

const char* Registry::copyText(std::string_view text) {
  char* copy = new char[text.size() + 1];
  std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = 0;
  return copy;
}

std::string_view Registry::view(const Entry& e) {
  const char* text = e.text.load(std::memory_order_acquire);
  return text == nullptr ? std::string_view() : std::string_view(text, e.bytes);
}

uint32_t Registry::createDomain(std::string_view name) try {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = domain_ids_.find(std::string(name));
  if (it != domain_ids_.end()) return it->second;
  if (domains_ >= kMaxDomains) {
    domains_refused_.fetch_add(1, std::memory_order_relaxed);
    return kFullDomain;
  }
  uint32_t index = domains_++;
  Entry& e = domain_entries_[index];
  e.bytes = static_cast<uint32_t>(name.size());
  e.text.store(copyText(name), std::memory_order_release);
  domain_ids_.emplace(std::string(name), index);
  return index;
} catch (...) {
  // Out of memory: NVTX callers are C, nothing may propagate. Treated like a full table.
  domains_refused_.fetch_add(1, std::memory_order_relaxed);
  return kFullDomain;
}

std::string_view Registry::domainName(uint32_t index) const {
  if (index == 0 || index >= kMaxDomains) return {};
  return view(domain_entries_[index]);
}

uint32_t Registry::registerString(uint32_t domain, std::string_view text) try {
  std::string key(reinterpret_cast<const char*>(&domain), sizeof(domain));
  key.append(text);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = string_ids_.find(key);
  if (it != string_ids_.end()) return it->second;
  if (strings_ >= kMaxStrings) {
    strings_refused_.fetch_add(1, std::memory_order_relaxed);
    return kFullString;
  }
  uint32_t id = strings_++;
  Entry& e = string_entries_[id];
  e.bytes = static_cast<uint32_t>(text.size());
  e.domain = domain;
  e.text.store(copyText(text), std::memory_order_release);
  string_ids_.emplace(std::move(key), id);
  return id;
} catch (...) {
  strings_refused_.fetch_add(1, std::memory_order_relaxed);
  return kFullString;
}

Registry::Registered Registry::string(uint32_t id) const {
  if (id == 0 || id >= kMaxStrings) return {};
  const Entry& e = string_entries_[id];
  const char* text = e.text.load(std::memory_order_acquire);
  if (text == nullptr) return {};
  return {e.domain, std::string_view(text, e.bytes), true};
}

}  // namespace argus::capture::nvtx
