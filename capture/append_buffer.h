// AppendBuffer<T>: a growable array of trivially copyable T for the step assembler's
// per-event buffers. append() is a capacity check and a store, inline; std::vector's
// emplace_back compiles to an out-of-line call with its reallocation path at -O2, a fifth
// of the per-kernel cost. Growth (doubling) is realloc, which remaps large blocks instead of
// copying them: an import buffers a whole trace. Capacity never shrinks, so in steady state
// nothing allocates. Not thread-safe.
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
  ~AppendBuffer() { std::free(data_); }

  T& append(const T& v) {
    T& slot = emplace();
    slot = v;
    return slot;
  }
  // A new last element, uninitialized: the caller writes every field (no temporary).
  T& emplace() {
    if (size_ == capacity_) grow();
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
  void clear() { size_ = 0; }
  // Removes [0, n), keeping the order of the rest. REQUIRES: n <= size().
  void erasePrefix(size_t n) {
    std::memmove(data_, data_ + n, (size_ - n) * sizeof(T));
    size_ -= n;
  }

 private:
  [[gnu::noinline]] void grow() {  // out of line: keeps append() a few instructions
    size_t capacity = capacity_ == 0 ? 256 : 2 * capacity_;
    void* bigger = std::realloc(data_, capacity * sizeof(T));
    if (bigger == nullptr) throw std::bad_alloc();
    data_ = static_cast<T*>(bigger);
    capacity_ = capacity;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace argus::capture
