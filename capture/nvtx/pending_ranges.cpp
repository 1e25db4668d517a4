#include "capture/nvtx/pending_ranges.h"

#include <algorithm>
#include <bit>

namespace argus::capture::nvtx {

PendingRanges::Entry* PendingRanges::find(uint64_t id) {
  if (size_ == 0) return nullptr;
  for (size_t i = home(id);; i = (i + 1) & mask_) {
    if (slots_[i].id == id) return &slots_[i];
    if (slots_[i].id == 0) return nullptr;
  }
}

void PendingRanges::place(const Entry& e) {
  size_t i = home(e.id);
  while (slots_[i].id != 0) i = (i + 1) & mask_;
  slots_[i] = e;
  ++size_;
}

void PendingRanges::rehash(size_t capacity) {
  scratch_.clear();
  for (const Entry& e : slots_) {
    if (e.id != 0) scratch_.push_back(e);
  }
  slots_.assign(capacity, Entry{});
  mask_ = capacity - 1;
  shift_ = 64 - std::countr_zero(capacity);
  size_ = 0;
  for (const Entry& e : scratch_) place(e);
}

PendingRanges::Entry& PendingRanges::insert(uint64_t id, uint64_t* unended, uint64_t* unstarted) {
  if (size_ >= max_) forgetOldest(unended, unstarted);
  // Load at most one half: probes stay short.
  if ((size_ + 1) * 2 > slots_.size()) rehash(std::max<size_t>(16, slots_.size() * 2));
  Entry e;
  e.id = id;
  e.seq = ++next_seq_;
  size_t i = home(id);
  while (slots_[i].id != 0) i = (i + 1) & mask_;
  slots_[i] = e;
  ++size_;
  return slots_[i];
}

void PendingRanges::erase(Entry* e) {
  size_t i = static_cast<size_t>(e - slots_.data());
  // Backward shift: move later members of the probe run into the hole when their home
  // allows it, so that find() can stop at the first empty slot.
  for (size_t j = (i + 1) & mask_; slots_[j].id != 0; j = (j + 1) & mask_) {
    size_t k = home(slots_[j].id);
    bool movable = i <= j ? (k <= i || k > j) : (k <= i && k > j);
    if (movable) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = Entry{};
  --size_;
}

void PendingRanges::forgetOldest(uint64_t* unended, uint64_t* unstarted) {
  seqs_.clear();
  for (const Entry& e : slots_) {
    if (e.id != 0) seqs_.push_back(e.seq);
  }
  auto middle = seqs_.begin() + static_cast<ptrdiff_t>(seqs_.size() / 2);
  std::nth_element(seqs_.begin(), middle, seqs_.end());
  uint64_t cut = *middle;
  for (Entry& e : slots_) {
    if (e.id == 0 || e.seq >= cut) continue;
    ++*(e.has_start ? unended : unstarted);
    e = Entry{};
  }
  rehash(slots_.size());  // the survivors, re-placed so probe runs have no holes
}

}  // namespace argus::capture::nvtx
