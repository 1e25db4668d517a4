// Helpers shared by the storage tests: a temp dir per test, a store opener, and a scan
// that collects every batch.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "storage/rocks_store.h"
#include "simulate/synthetic_steps.h"

namespace argus::storage::testutil {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/argus-storage-test-XXXXXX";
    char* p = mkdtemp(tmpl.data());
    REQUIRE(p != nullptr);
    path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::unique_ptr<RocksStore> openStore(const std::string& dir, uint32_t block_steps = 16, bool sync = false) {
  StoreOptions o;
  o.block_steps = block_steps;
  o.sync_wal = sync;
  auto r = RocksStore::openRocks(dir, o);
  REQUIRE_MESSAGE(r.isOk(), r.status().toString());
  return std::move(r).value();
}

inline Status scanAll(const Store& store, const ScanSpec& spec, ColumnBatch* out, ScanStats* stats = nullptr) {
  auto cursor = store.scan(spec);
  if (!cursor.isOk()) return cursor.status();
  out->columns.clear();
  out->rows = 0;
  ColumnBatch batch;
  for (;;) {
    bool has = false;
    ARGUS_RETURN_IF_ERROR((*cursor)->next(&batch, &has));
    if (!has) break;
    if (out->columns.empty()) {
      out->columns = batch.columns;
    } else {
      for (size_t c = 0; c < batch.columns.size(); ++c) {
        auto& o = out->columns[c];
        const auto& b = batch.columns[c];
        o.ints.insert(o.ints.end(), b.ints.begin(), b.ints.end());
        for (const auto& h : b.hists) o.hists.push_back(h);
      }
    }
    out->rows += batch.rows;
  }
  if (stats) *stats = (*cursor)->stats();
  return Status::ok();
}

inline const Column& col(const ColumnBatch& b, std::string_view name) {
  for (const auto& c : b.columns) {
    if (c.name == name) return c;
  }
  FAIL("no column " << std::string(name));
  return b.columns[0];
}

inline Status writeRecords(Store& store, JobId job, const std::vector<model::StepRecord>& recs) {
  WriteRequest r;
  r.job = job;
  r.records = recs;
  return store.write(r);
}

}  // namespace argus::storage::testutil
