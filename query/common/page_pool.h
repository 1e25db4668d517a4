// PagePool: 1 MiB pages of query memory kept for the next query once a query frees them.
//
// A per-step median over 10 M values keeps 80 MB of them (function/kept_values.h). Freed to
// the allocator, those pages went back to the kernel (jemalloc's decay and per-thread
// arenas), and the next query faulted every one of them in again: 14,000 page faults, about
// an eighth of its time. Pages given back here are reused as they are, up to a cap;
// past it they are freed. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace argus::query {

class PagePool {
 public:
  static constexpr size_t kPageBytes = size_t{1} << 20;

  explicit PagePool(size_t max_kept_bytes) : max_kept_(max_kept_bytes / kPageBytes) {}
  PagePool(const PagePool&) = delete;
  PagePool& operator=(const PagePool&) = delete;

  // The process's pool: up to 256 MiB kept.
  static PagePool& shared();

  // A page of kPageBytes, uninitialized: a kept one when there is one.
  std::unique_ptr<std::byte[]> take();
  // Keeps the page (from take()) for a later take(), or frees it when the pool is full.
  void give(std::unique_ptr<std::byte[]> page);

  size_t keptPages() const;

 private:
  const size_t max_kept_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<std::byte[]>> kept_;
};

// Bytes for a bump allocator: full-size pages come from the shared pool and go back to it.
class PooledPage {
 public:
  explicit PooledPage(size_t size)
      : bytes_(size == PagePool::kPageBytes ? PagePool::shared().take() : std::make_unique_for_overwrite<std::byte[]>(size)), size_(size) {}
  PooledPage(PooledPage&&) noexcept = default;
  PooledPage& operator=(PooledPage&& other) noexcept {
    release();
    bytes_ = std::move(other.bytes_);
    size_ = other.size_;
    return *this;
  }
  ~PooledPage() { release(); }

  std::byte* get() const { return bytes_.get(); }

 private:
  void release() {
    if (size_ == PagePool::kPageBytes) PagePool::shared().give(std::move(bytes_));
    bytes_.reset();
  }
  std::unique_ptr<std::byte[]> bytes_;
  size_t size_;
};

}  // namespace argus::query
