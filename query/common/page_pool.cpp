#include "query/common/page_pool.h"

namespace argus::query {

PagePool& PagePool::shared() {
  static PagePool pool(size_t{256} << 20);
  return pool;
}

std::unique_ptr<std::byte[]> PagePool::take() {
  {
    std::lock_guard lock(mu_);
    if (!kept_.empty()) {
      std::unique_ptr<std::byte[]> page = std::move(kept_.back());
      kept_.pop_back();
      return page;
    }
  }
  return std::make_unique_for_overwrite<std::byte[]>(kPageBytes);
}

void PagePool::give(std::unique_ptr<std::byte[]> page) {
  if (page == nullptr) return;
  std::lock_guard lock(mu_);
  if (kept_.size() < max_kept_) kept_.push_back(std::move(page));
  // else: freed as `page` leaves scope, after the lock
}

size_t PagePool::keptPages() const {
  std::lock_guard lock(mu_);
  return kept_.size();
}

}  // namespace argus::query
