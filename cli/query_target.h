// QueryTarget: where `argus query` and `argus shell` run statements, a store opened
// read-only in this process or argusd's POST /api/v1/query, and how results print
// (docs/cli/argus.md): `table` aligned with "(N rows)", `csv` and `json` byte for byte as
// the engine's writers (query/result_writer.h) or the server produce them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "query/common/query_context.h"
#include "query/engine.h"

namespace argus::cli {

enum class OutputFormat : uint8_t { kTable, kCsv, kJson };

// "table", "csv", "json"; false for anything else.
bool parseOutputFormat(std::string_view text, OutputFormat* out);

struct ColumnInfo {
  std::string name;
  std::string type;  // BIGINT, DOUBLE, VARCHAR, ... as docs/query/language.md names them
};

class QueryTarget {
 public:
  virtual ~QueryTarget() = default;

  // Opens `data_dir` read-only: statements see the store as of the open.
  static Result<std::unique_ptr<QueryTarget>> openData(const std::string& data_dir);
  // InvalidArgument unless host_port is HOST:PORT (wire::parseHostPort). Connects per statement,
  // sending `token` (non-empty) as a bearer token (argusd --http-tokens).
  static Result<std::unique_ptr<QueryTarget>> connect(const std::string& host_port, const std::string& token = {});

  // Runs one statement and prints its result on stdout. On failure the status message is
  // what to print: the error, and for a query error a line with the statement and a caret
  // under the position (no trailing newline). `stats` (may be null) gets the engine's
  // figures where the target has them (embedded).
  virtual Status run(std::string_view sql, OutputFormat format, const query::QueryOptions& options,
                     query::QueryStats* stats) = 0;

  // The answer as JSON text (docs/http/api.md: `columns`, `rows`, `stats`), the same bytes
  // from either target: for callers that read the rows themselves. Errors as run()'s.
  virtual Result<std::string> answerJson(std::string_view sql, const query::QueryOptions& options) = 0;

  // The columns and types `sql` answers with, from the target itself (for `\describe`).
  Result<std::vector<ColumnInfo>> columns(std::string_view sql, const query::QueryOptions& options);
};

}  // namespace argus::cli
