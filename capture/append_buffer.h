// AppendBuffer<T>: a growable array of trivially copyable T for the step assembler's
// per-event buffers. append() is a capacity check and a store, inline; std::vector's
// emplace_back compiles to an out-of-line call with its reallocation path at -O2, a fifth
// of the per-kernel cost. Growth (doubling) is realloc, which remaps large blocks instead of
// copying them: an import buffers a whole trace. erasePrefix() is O(1): it only moves the
// front; the space it frees is reclaimed when an append finds no room (the live part moves
// to the front then, once per at least capacity / 2 appends), so a buffer whose front is
// dropped after every step moves nothing most steps. Capacity never shrinks, so in steady
// state nothing allocates. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace argus::capture {

template <typename T>
class AppendBuffer {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= alignof(std::max_align_t));

 public:
  AppendBuffer() = default;
  AppendBuffer(const AppendBuffer&) = delete;
  AppendBuffer& operator=(const AppendBuffer&) = delete;
  ~AppendBuffer() { std::free(base_); }

  T& append(const T& v) {
    T& slot = emplace();
    slot = v;
    return slot;
  }
  // A new last element, uninitialized: the caller writes every field (no temporary).
  T& emplace() {
    if (size_ == room_) makeRoom();
    return data_[size_++];
  }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // REQUIRES: n <= size().
  void shrink(size_t n) { size_ = n; }
  void clear() {
    data_ = base_;
    size_ = 0;
    room_ = capacity_;
  }
  // Removes [0, n), keeping the order of the rest; indices shift down by n. REQUIRES: n <= size().
  void erasePrefix(size_t n) {
    data_ += n;
    size_ -= n;
    room_ -= n;
  }

 private:
  // Out of line: keeps append() a few instructions. Moves the live part to the front of the
  // allocation, and doubles it when that leaves less than half of it free.
  [[gnu::noinline]] void makeRoom() {
    if (data_ != base_) std::memmove(base_, data_, size_ * sizeof(T));
    data_ = base_;
    if (size_ >= capacity_ / 2) {
      size_t capacity = capacity_ == 0 ? 256 : 2 * capacity_;
      void* bigger = std::realloc(base_, capacity * sizeof(T));
      if (bigger == nullptr) throw std::bad_alloc();
      base_ = data_ = static_cast<T*>(bigger);
      capacity_ = capacity;
    }
    room_ = capacity_;
  }

  T* base_ = nullptr;   // the allocation: capacity_ elements
  T* data_ = nullptr;   // element 0, inside it
  size_t size_ = 0;
  size_t room_ = 0;     // elements from data_ to the allocation's end
  size_t capacity_ = 0;
};

}  // namespace argus::capture
