// QueryEngine: runs one statement of the query language over a store (docs/query/language.md):
// parse -> bind -> plan (pushdown, column pruning) -> physical operators -> a materialized
// QueryResult. Thread-safe: each run() has its own context; the store is only read.
//
//   query::QueryEngine engine(store);
//   query::QueryResult r = engine.run("SELECT step, max(iter_ns) FROM steps WHERE job = 'a' GROUP BY step");
//
// Throws ParserError, BinderError or ExecutionError (query/common/errors.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "query/common/query_context.h"
#include "query/common/vector.h"
#include "storage/store.h"

namespace argus::query {

struct QueryResult {
  std::vector<std::string> names;
  std::vector<LogicalType> types;
  std::vector<Vector> columns;  // flat, `rows` rows each
  size_t rows = 0;
  std::unique_ptr<Arena> arena = std::make_unique<Arena>();  // strings and histograms of the cells
  QueryStats stats;

  Value value(size_t row, size_t column) const { return columns[column].value(row); }
};

class QueryEngine {
 public:
  explicit QueryEngine(const storage::Store& store) : store_(store) {}
  QueryResult run(std::string_view sql, const QueryOptions& options = {}) const;

 private:
  const storage::Store& store_;
};

}  // namespace argus::query
