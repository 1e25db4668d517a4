// PagePool: pages given back are handed out again, up to the cap; a page is never held by
// two owners at once, from many threads; KeptValues' full-size pages go back to the pool.
#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "query/common/page_pool.h"
#include "query/function/kept_values.h"

using argus::query::KeptValues;
using argus::query::PagePool;

TEST_CASE("page pool: a page given back is the next one taken; past the cap pages are freed") {
  PagePool pool(2 * PagePool::kPageBytes);
  std::vector<std::unique_ptr<std::byte[]>> pages;
  std::set<std::byte*> seen;
  for (int i = 0; i < 3; ++i) {
    pages.push_back(pool.take());
    CHECK(seen.insert(pages.back().get()).second);
  }
  CHECK(pool.keptPages() == 0);
  std::byte* last = pages.back().get();
  for (auto& p : pages) pool.give(std::move(p));
  CHECK(pool.keptPages() == 2);  // the third was freed
  pool.give(nullptr);
  CHECK(pool.keptPages() == 2);
  auto again = pool.take();
  CHECK(seen.count(again.get()) == 1);
  CHECK(again.get() != last);  // the one past the cap is gone
  CHECK(pool.keptPages() == 1);
}

TEST_CASE("page pool: threads taking and giving never share a page") {
  PagePool pool(8 * PagePool::kPageBytes);
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        auto page = pool.take();
        std::memset(page.get(), t + 1, 4096);
        std::this_thread::yield();
        for (size_t b = 0; b < 4096; b += 512) bad[t] += page[b] != std::byte(t + 1);
        pool.give(std::move(page));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) CHECK(bad[t] == 0);
  CHECK(pool.keptPages() <= 4);
}

TEST_CASE("page pool: kept values return their full-size pages, and the next query's reuse them") {
  PagePool& shared = PagePool::shared();
  // Values on full-size pages: 4 MB over 8 groups.
  auto fill = [](KeptValues<int64_t>& kept, int64_t salt) {
    kept.resize(8);
    for (int64_t i = 0; i < 500'000; ++i) kept.append(static_cast<uint32_t>(i % 8), i * salt);
  };
  size_t before = 0;
  {
    KeptValues<int64_t> kept;
    fill(kept, 3);
    before = shared.keptPages();
  }
  const size_t returned = shared.keptPages() - before;
  CHECK(returned >= 2);
  KeptValues<int64_t> next;
  fill(next, 7);  // on reused pages, still holding the last query's values
  CHECK(shared.keptPages() <= before + returned - 2);
  std::vector<int64_t> got;
  next.gather(5, &got);
  REQUIRE(got.size() == 62'500);
  for (size_t j = 0; j < got.size(); ++j) REQUIRE(got[j] == static_cast<int64_t>(5 + 8 * j) * 7);
}
