// Registry: NVTX domains (nvtxDomainCreate) and registered strings (nvtxDomainRegisterString)
// of the process. We issue the handles NVTX hands back to the application: a domain handle
// is its index, a string handle its id, cast to the opaque pointer types, so that an event
// names its domain and registered string without any lookup on the training thread.
//
// Registration is rare (once per domain or string, at start-up): it takes a mutex among
// registering threads and allocates. Reading (the drain) is lock-free: an entry is written
// fully, then its text pointer is published (release); texts live as long as the Registry.
// The same name registers once: creating domain "NCCL" twice gives one index.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace argus::capture::nvtx {

class Registry {
 public:
  static constexpr uint32_t kMaxDomains = 256;     // index 0 is NVTX's default domain
  static constexpr uint32_t kMaxStrings = 16384;   // ids 1 .. kMaxStrings - 1
  static constexpr uint32_t kMaxTextBytes = 1024;  // longer names are cut (UTF-8 safe)
  // Returned when a table is full: not a valid index or id (events using it are counted).
  static constexpr uint32_t kFullDomain = kMaxDomains;
  static constexpr uint32_t kFullString = kMaxStrings;

  Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;
  ~Registry();

  // Returns the index (>= 1) of the domain called `name`, or kFullDomain (also when out of
  // memory). Thread-safe; never throws.
  uint32_t createDomain(std::string_view name);
  // The name of a domain index; "" for 0 (the default domain) and unknown indices.
  std::string_view domainName(uint32_t index) const;

  // Returns the id (>= 1) of `text` registered in `domain`, or kFullString. Thread-safe;
  // never throws.
  uint32_t registerString(uint32_t domain, std::string_view text);
  struct Registered {
    uint32_t domain = 0;
    std::string_view text;
    bool known = false;
  };
  Registered string(uint32_t id) const;

  uint64_t domainsRefused() const { return domains_refused_.load(std::memory_order_relaxed); }
  uint64_t stringsRefused() const { return strings_refused_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::atomic<const char*> text{nullptr};  // published last
    uint32_t bytes = 0;
    uint32_t domain = 0;
  };
  static const char* copyText(std::string_view text);
  static std::string_view view(const Entry& e);

  std::mutex mu_;                                         // registering threads only; readers never take it
  std::unordered_map<std::string, uint32_t> domain_ids_;  // GUARDED_BY(mu_)
  std::unordered_map<std::string, uint32_t> string_ids_;  // GUARDED_BY(mu_); key: domain index bytes + text
  uint32_t domains_ = 1;                                  // GUARDED_BY(mu_): next index
  uint32_t strings_ = 1;                                  // GUARDED_BY(mu_): next id
  std::unique_ptr<Entry[]> domain_entries_;
  std::unique_ptr<Entry[]> string_entries_;
  std::atomic<uint64_t> domains_refused_{0};
  std::atomic<uint64_t> strings_refused_{0};
};

}  // namespace argus::capture::nvtx
