// PendingRanges: nvtxRangeStart ranges whose end the drain has not seen yet, and ends whose
// start it has not seen yet (the start sits in a ring read later), keyed by range id.
//
// An open-addressing table (linear probing, backward-shift erase) that grows by doubling up
// to its bound and is reused afterwards: in steady state a start/end pair costs no
// allocation. At the bound the oldest half is forgotten (ranges that never end would
// otherwise pile up forever). Not thread-safe: the drain's thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace argus::capture::nvtx {

class PendingRanges {
 public:
  struct Entry {
    uint64_t id = 0;   // 0: empty slot (range ids are never 0)
    uint64_t seq = 0;  // arrival order
    int64_t start_ns = 0, end_ns = 0;
    uint64_t payload = 0;  // TraceEvent::id of the range
    uint32_t name = 0;
    uint32_t thread = 0;
    bool has_start = false, has_end = false;
  };

  // REQUIRES: max_entries >= 2.
  explicit PendingRanges(size_t max_entries) : max_(max_entries) {}

  size_t size() const { return size_; }
  // The entry of `id`, or nullptr. Valid until the next insert or erase.
  Entry* find(uint64_t id);
  // Inserts an empty entry for `id` (absent). At the bound, first forgets the oldest half,
  // counting them: a start that never saw its end in *unended, an end without start in
  // *unstarted.
  Entry& insert(uint64_t id, uint64_t* unended, uint64_t* unstarted);
  void erase(Entry* e);

 private:
  size_t home(uint64_t id) const { return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_); }
  void rehash(size_t capacity);
  void place(const Entry& e);
  void forgetOldest(uint64_t* unended, uint64_t* unstarted);

  const size_t max_;
  std::vector<Entry> slots_;
  std::vector<Entry> scratch_;
  std::vector<uint64_t> seqs_;
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
  uint64_t next_seq_ = 0;
};

}  // namespace argus::capture::nvtx
