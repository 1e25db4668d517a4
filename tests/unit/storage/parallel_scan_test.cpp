// ParallelScanCursor through Store::scan (ScanSpec::threads): the same rows in the same
// order as one thread, in batches as full, whatever the thread count and however many
// workers are free to take its parts; errors in order; a reader that stops early never
// waits on its workers.
#include <doctest/doctest.h>

#include "storage/keys.h"
#include "tests/unit/base/held_workers.h"
#include "store_test_util.h"

using namespace argus;
using namespace argus::storage;
using namespace argus::storage::testutil;

namespace {

// Ranks 0..ranks-1 with 40 steps each (block_steps 16): blocks 0 and 16 sealed, 32 in head,
// with 8 kernel signatures per step.
// Ranks from short_from on have 20 steps only (blocks 0 and 16, sealed).
std::unique_ptr<RocksStore> filledStore(const TempDir& dir, uint32_t ranks, uint32_t short_from = UINT32_MAX) {
  auto store = openStore(dir.path());
  JobId job = store->ensureJob("job").value();
  std::vector<std::vector<model::StepRecord>> recs(ranks);
  std::vector<WriteRequest> reqs(ranks);
  for (uint32_t r = 0; r < ranks; ++r) {
    simulate::SyntheticOptions o;
    o.signatures = 8;
    simulate::SyntheticSteps gen(r, o);
    for (int s = 0; s < (r >= short_from ? 20 : 40); ++s) recs[r].push_back(gen.next());
    reqs[r].job = job;
    reqs[r].records = recs[r];
  }
  REQUIRE(store->writeGroup(reqs).isOk());
  REQUIRE(store->sealReady().isOk());
  return store;
}

// Each batch's row count, and every value in order.
struct Scanned {
  std::vector<size_t> batch_rows;
  ColumnBatch all;
  ScanStats stats;
};

Scanned scan(const Store& store, ScanSpec spec) {
  Scanned out;
  auto cursor = store.scan(spec);
  REQUIRE_MESSAGE(cursor.isOk(), cursor.status().toString());
  ColumnBatch b;
  for (;;) {
    bool has = false;
    Status s = (*cursor)->next(&b, &has);
    REQUIRE_MESSAGE(s.isOk(), s.toString());
    if (!has) break;
    out.batch_rows.push_back(b.rows);
    if (out.all.columns.empty()) out.all.columns.resize(b.columns.size());
    for (size_t c = 0; c < b.columns.size(); ++c) {
      out.all.columns[c].name = b.columns[c].name;
      out.all.columns[c].ints.insert(out.all.columns[c].ints.end(), b.columns[c].ints.begin(), b.columns[c].ints.end());
      for (const auto& h : b.columns[c].hists) out.all.columns[c].hists.push_back(h);
    }
    out.all.rows += b.rows;
  }
  out.stats = (*cursor)->stats();
  return out;
}

// The same rows, values and chunk counts as a one-thread scan's.
void checkSameAs(const Scanned& one, const Scanned& many) {
  REQUIRE(many.all.rows == one.all.rows);
  for (size_t c = 0; c < one.all.columns.size(); ++c) {
    CAPTURE(one.all.columns[c].name);
    CHECK(many.all.columns[c].ints == one.all.columns[c].ints);
    CHECK(many.all.columns[c].hists == one.all.columns[c].hists);
  }
  CHECK(many.stats.chunks_read == one.stats.chunks_read);
}

}  // namespace

TEST_CASE("a parallel scan returns one thread's rows, in order, and its stats") {
  TempDir dir;
  auto store = filledStore(dir, 37);
  for (Table table : {Table::kSteps, Table::kKernels}) {
    for (size_t batch_rows : {size_t{7}, size_t{100}, size_t{4096}}) {
      for (uint64_t from : {uint64_t{0}, uint64_t{10}}) {
        for (bool some_ranks : {false, true}) {
          ScanSpec spec;
          spec.job = "job";
          spec.table = table;
          spec.batch_rows = batch_rows;
          spec.from_step = from;
          spec.to_step = from + 25;  // a sealed block, part of another, head
          if (some_ranks) spec.ranks = {1, 2, 3, 5, 8, 13, 21, 34};
          CAPTURE(tableName(table));
          CAPTURE(batch_rows);
          CAPTURE(from);
          CAPTURE(some_ranks);
          spec.threads = 1;
          const Scanned one = scan(*store, spec);
          REQUIRE(one.all.rows > 0);
          for (size_t threads : {2, 3, 8}) {
            CAPTURE(threads);
            spec.threads = threads;
            const Scanned many = scan(*store, spec);
            // Short batches where stripes end are joined: never over batch_rows, and at
            // most one short batch per full one.
            CHECK(many.batch_rows.size() <= 2 * one.batch_rows.size() + 1);
            for (size_t n : many.batch_rows) CHECK(n <= batch_rows);
            checkSameAs(one, many);
            CHECK(many.stats.chunks_skipped == one.stats.chunks_skipped);
            CHECK(many.stats.head_rows_read == one.stats.head_rows_read);
            CHECK(many.stats.head_entries_read == one.stats.head_entries_read);
          }
        }
      }
    }
  }
}

TEST_CASE("with every worker busy, the reader reads each part itself: one thread's rows") {
  TempDir dir;
  auto store = filledStore(dir, 37);
  ScanSpec spec;
  spec.job = "job";
  spec.table = Table::kKernels;
  spec.batch_rows = 100;
  spec.threads = 1;
  const Scanned one = scan(*store, spec);
  // Other work holds every worker: the scan's parts all fall to its reader.
  argus::testutil::HeldWorkers held;
  REQUIRE(held.held() >= 1);
  spec.threads = 3;
  const Scanned many = scan(*store, spec);
  held.release();
  checkSameAs(one, many);
}

TEST_CASE("many ranks are listed on several threads: the same rows as one thread lists") {
  TempDir dir;
  // Over 2 x RocksScanCursor::kRanksPerListingThread ranks; the last 60 stop before the last
  // block, so the highest rank of the last block is not the highest of all.
  auto store = filledStore(dir, 1100, 1040);
  for (uint64_t from : {uint64_t{0}, uint64_t{10}, uint64_t{33}}) {
    ScanSpec spec;
    spec.job = "job";
    spec.columns = {"rank", "step", "iter_ns"};
    spec.from_step = from;
    spec.to_step = from + 25;
    CAPTURE(from);
    spec.threads = 1;
    const Scanned one = scan(*store, spec);
    REQUIRE(one.all.rows > 0);
    for (size_t threads : {2, 3}) {
      // The plan keeps every listed value, some (the rest read again when reached), none.
      for (size_t plan_bytes : {spec.plan_bytes, size_t{40'000}, size_t{0}}) {
        CAPTURE(threads);
        CAPTURE(plan_bytes);
        ScanSpec s = spec;
        s.threads = threads;
        s.plan_bytes = plan_bytes;
        const Scanned many = scan(*store, s);
        REQUIRE(many.all.rows == one.all.rows);
        for (size_t c = 0; c < one.all.columns.size(); ++c) CHECK(many.all.columns[c].ints == one.all.columns[c].ints);
        CHECK(many.stats.chunks_read == one.stats.chunks_read);
      }
    }
  }
}

TEST_CASE("a short step range takes many ranks a stripe") {
  TempDir dir;
  auto store = filledStore(dir, 1100);
  ScanSpec spec;
  spec.job = "job";
  spec.columns = {"rank", "iter_ns"};
  spec.from_step = 3;
  spec.to_step = 5;
  auto parts = store->scanParts(spec, 2);
  REQUIRE(parts.isOk());
  // About eight stripes a part (1100 / 16 = 68 ranks each), not stripes of 8 ranks: a part
  // skips the other's stripe between two of its own.
  CHECK((*parts)->stripes() == 17);
}

TEST_CASE("contiguous parts each read one run of stripes; together, one thread's rows") {
  TempDir dir;
  auto store = filledStore(dir, 37);
  ScanSpec spec;
  spec.job = "job";
  spec.columns = {"rank", "step", "iter_ns"};
  spec.to_step = 25;
  const Scanned one = scan(*store, spec);
  spec.contiguous_parts = true;
  for (size_t n : {2, 3}) {
    CAPTURE(n);
    auto parts = store->scanParts(spec, n);
    REQUIRE(parts.isOk());
    std::vector<std::vector<int64_t>> by_stripe((*parts)->stripes());  // rank * 1000 + step, per stripe
    size_t next_stripe = 0;
    for (size_t p = 0; p < (*parts)->size(); ++p) {
      ScanPart& part = (*parts)->part(p);
      while (part.nextStripe()) {
        CHECK(part.stripe() == next_stripe++);  // part p's run follows part p - 1's
        for (;;) {
          ColumnBatch b;
          bool has = false;
          REQUIRE(part.next(&b, &has).isOk());
          if (!has) break;
          for (size_t i = 0; i < b.rows; ++i) by_stripe[part.stripe()].push_back(b.columns[0].ints[i] * 1000 + b.columns[1].ints[i]);
        }
      }
    }
    CHECK(next_stripe == (*parts)->stripes());
    std::vector<int64_t> all, want;
    for (const auto& rows : by_stripe) all.insert(all.end(), rows.begin(), rows.end());
    for (size_t i = 0; i < one.all.rows; ++i) want.push_back(one.all.columns[0].ints[i] * 1000 + one.all.columns[1].ints[i]);
    CHECK(all == want);
  }
}

TEST_CASE("a parallel scan stops cleanly when its reader stops early") {
  TempDir dir;
  auto store = filledStore(dir, 64);
  for (int taken : {0, 1, 5}) {
    ScanSpec spec;
    spec.job = "job";
    spec.table = Table::kKernels;
    spec.batch_rows = 16;  // many batches: the workers fill their queues and wait
    spec.threads = 4;
    auto cursor = store->scan(spec);
    REQUIRE(cursor.isOk());
    ColumnBatch b;
    for (int i = 0; i < taken; ++i) {
      bool has = false;
      REQUIRE((*cursor)->next(&b, &has).isOk());
      CHECK(has);
    }
    // Destroyed with workers blocked on full queues: returns (the test would hang otherwise).
  }
}

TEST_CASE("a parallel scan reports a damaged chunk after the rows before it") {
  TempDir dir;
  auto store = filledStore(dir, 40);
  const DbHandles& h = store->handles();
  // Rank 25's iter_ns chunk of block 0: garbage.
  JobId job = store->findJob("job").value().id;
  std::string key = encodeChunkKey(ChunkKey{job, Table::kSteps, findColumn(Table::kSteps, "iter_ns")->id, 0, 25, 0});
  REQUIRE(h.db->Put(rocksdb::WriteOptions(), h.chunk, key, "garbage").ok());
  for (size_t threads : {1, 2, 4}) {
    CAPTURE(threads);
    ScanSpec spec;
    spec.job = "job";
    spec.table = Table::kSteps;
    spec.columns = {"rank", "iter_ns"};
    spec.batch_rows = 10;
    spec.threads = threads;
    auto cursor = store->scan(spec);
    REQUIRE(cursor.isOk());
    ColumnBatch b;
    size_t rows = 0;
    int64_t last_rank = -1;
    Status s;
    for (;;) {
      bool has = false;
      s = (*cursor)->next(&b, &has);
      if (!s.isOk() || !has) break;
      rows += b.rows;
      last_rank = b.columns[0].ints.back();
    }
    CHECK(s.isCorruption());
    CHECK(s.message().find("rank=25") != std::string::npos);
    CHECK(last_rank < 25);
    CHECK(rows <= 25 * 40);
  }
}

TEST_CASE("a malformed chunk key among those the listing walks stops the scan with Corruption") {
  TempDir dir;
  auto store = filledStore(dir, 40);
  const DbHandles& h = store->handles();
  JobId job = store->findJob("job").value().id;
  // Inside block 16's keys of _steps and of the first stored column (the listing walks the
  // latter when the scan reads it), three bytes short of a rank and an attempt.
  for (uint8_t column : {kStepsColumnId, kFirstStoredColumnId}) {
    const std::string key = chunkPrefix(job, Table::kSteps, column, 16) + std::string(3, '\x07');
    REQUIRE(h.db->Put(rocksdb::WriteOptions(), h.chunk, key, "x").ok());
  }
  for (size_t threads : {1, 4}) {
    for (bool stored : {false, true}) {
      CAPTURE(threads);
      CAPTURE(stored);
      ScanSpec spec;
      spec.job = "job";
      spec.threads = threads;
      if (!stored) spec.columns = {"rank", "step"};
      auto cursor = store->scan(spec);
      REQUIRE_FALSE(cursor.isOk());
      CHECK(cursor.status().isCorruption());
      CHECK(cursor.status().message().find("malformed chunk key") != std::string::npos);
    }
  }
}
