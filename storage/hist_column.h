// HistColumn: a column of histograms whose elements outlive clear() and resize(), each
// keeping its bucket buffer. A scan decodes a block's histograms into one (refill reuses
// the buffers) and hands them to its batch by swapping (takeFrom), so once the columns on
// both sides have held a block's worth, no histogram is allocated again: the allocations
// and frees were an eighth of a kernel-histogram scan.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "model/duration_histogram.h"

namespace argus::storage {

class HistColumn {
 public:
  using Histogram = model::DurationHistogram;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  // n histograms; those past the old size start empty.
  void resize(size_t n) {
    if (n > items_.size()) items_.resize(n);
    for (size_t i = size_; i < n; ++i) items_[i].clear();
    size_ = n;
  }
  // n histograms holding whatever they held: for a decoder that refills or clears every
  // one (clearing each first was 3% of a kernel-histogram scan).
  void resizeForRefill(size_t n) {
    if (n > items_.size()) items_.resize(n);
    size_ = n;
  }
  void push_back(const Histogram& h) { slot() = h; }
  void push_back(Histogram&& h) { slot() = std::move(h); }
  // Appends src[first, last) by swapping: those elements of src are left holding this
  // column's spare buffers, their contents unspecified (src's caller reads them no more).
  void takeFrom(HistColumn& src, size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) std::swap(slot(), src.items_[i]);
  }

  Histogram& operator[](size_t i) { return items_[i]; }
  const Histogram& operator[](size_t i) const { return items_[i]; }
  Histogram* begin() { return items_.data(); }
  Histogram* end() { return items_.data() + size_; }
  const Histogram* begin() const { return items_.data(); }
  const Histogram* end() const { return items_.data() + size_; }
  operator std::span<const Histogram>() const { return {items_.data(), size_}; }

  bool operator==(const HistColumn& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }
  bool operator==(std::span<const Histogram> o) const { return std::equal(begin(), end(), o.begin(), o.end()); }

 private:
  // A new last element (reusing a spare one when there is one), size included.
  Histogram& slot() {
    if (size_ == items_.size()) items_.emplace_back();
    return items_[size_++];
  }

  std::vector<Histogram> items_;  // [0, size_) the column; the rest spares
  size_t size_ = 0;
};

}  // namespace argus::storage
