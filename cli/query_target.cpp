#include "cli/query_target.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/http_client.h"
#include "cli/table_printer.h"
#include "query/result_writer.h"
#include "storage/rocks_store.h"
#include "wire/tcp.h"

namespace argus::cli {

namespace {

using Json = nlohmann::json;

void printRowCount(size_t rows) { std::printf("(%zu row%s)\n", rows, rows == 1 ? "" : "s"); }

// The error and, when it names a position, the statement line with a caret under it.
Status queryError(std::string message, std::string_view sql, query::SourcePos pos) {
  std::string caret = query::caretText(sql, pos);
  if (!caret.empty()) {
    caret.pop_back();  // caretText ends with a newline; the printer adds its own
    message += "\n" + caret;
  }
  return Status::invalidArgument(message);
}

class EmbeddedTarget final : public QueryTarget {
 public:
  explicit EmbeddedTarget(std::unique_ptr<storage::Store> store) : store_(std::move(store)) {}

  Status run(std::string_view sql, OutputFormat format, const query::QueryOptions& options, query::QueryStats* stats) override {
    query::QueryResult r;
    ARGUS_RETURN_IF_ERROR(execute(sql, options, &r));
    if (stats != nullptr) *stats = r.stats;
    std::string out;
    switch (format) {
      case OutputFormat::kJson:
        query::writeJson(r, &out);
        out.push_back('\n');
        break;
      case OutputFormat::kCsv: query::writeCsv(r, &out); break;
      case OutputFormat::kTable: {
        TablePrinter table(r.names);
        for (size_t row = 0; row < r.rows; ++row) {
          std::vector<std::string> cells;
          for (const query::Vector& v : r.columns) cells.push_back(query::cellText(v, row));
          table.addRow(std::move(cells));
        }
        table.print(stdout);
        printRowCount(r.rows);
        break;
      }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status::ok();
  }

  Result<std::string> answerJson(std::string_view sql, const query::QueryOptions& options) override {
    query::QueryResult r;
    ARGUS_RETURN_IF_ERROR(execute(sql, options, &r));
    std::string out;
    query::writeJson(r, &out);
    return out;
  }

 private:
  Status execute(std::string_view sql, const query::QueryOptions& options, query::QueryResult* r) {
    try {
      *r = query::QueryEngine(*store_).run(sql, options);
    } catch (const query::QueryError& e) {
      return queryError(e.what(), sql, e.pos());
    }
    return Status::ok();
  }

  std::unique_ptr<storage::Store> store_;
};

// The cell of a JSON answer as the table shows it, the same text cellText gives embedded.
std::string jsonCellText(const Json& cell) {
  if (cell.is_null()) return "NULL";
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_object()) {
    return query::histogramText(cell["count"].get<uint64_t>(), cell["p50"].get<double>(), cell["p90"].get<double>(),
                                cell["p99"].get<double>());
  }
  if (cell.is_number_float()) return query::doubleText(cell.get<double>());
  return cell.dump();
}

class ServerTarget final : public QueryTarget {
 public:
  ServerTarget(std::string host_port, std::string host, uint16_t port, std::string token)
      : host_port_(std::move(host_port)), host_(std::move(host)), port_(port), token_(std::move(token)) {}

  Status run(std::string_view sql, OutputFormat format, const query::QueryOptions& options, query::QueryStats*) override {
    std::string body;
    ARGUS_RETURN_IF_ERROR(post(sql, format == OutputFormat::kCsv ? "csv" : "json", options, &body));
    if (format != OutputFormat::kTable) {
      std::fwrite(body.data(), 1, body.size(), stdout);
      if (format == OutputFormat::kJson) std::fputc('\n', stdout);
      return Status::ok();
    }
    try {
      Json j = Json::parse(body);
      std::vector<std::string> header;
      for (const auto& c : j["columns"]) header.push_back(c["name"].get<std::string>());
      TablePrinter table(header);
      size_t rows = 0;
      for (const auto& row : j["rows"]) {
        std::vector<std::string> cells;
        for (const auto& cell : row) cells.push_back(jsonCellText(cell));
        table.addRow(std::move(cells));
        ++rows;
      }
      table.print(stdout);
      printRowCount(rows);
    } catch (const Json::exception& e) {
      return unreadable(e);
    }
    return Status::ok();
  }

  Result<std::string> answerJson(std::string_view sql, const query::QueryOptions& options) override {
    std::string body;
    ARGUS_RETURN_IF_ERROR(post(sql, "json", options, &body));
    return body;
  }

 private:
  // POSTs sql; on 200 the body, else the server's error with a caret like embedded errors.
  Status post(std::string_view sql, const char* format, const query::QueryOptions& options, std::string* body) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(options.deadline).count();
    std::string target = "/api/v1/query?format=" + std::string(format) + "&timeout_ms=" + std::to_string(ms) +
                         "&memory_limit=" + std::to_string(options.memory_limit_bytes) + (options.pushdown ? "" : "&pushdown=off");
    // The server stops the query at its deadline; the extra time covers the answer's way back,
    // so a server that went away or hangs is an error, never a wait without end.
    auto reply = httpRequest(host_, port_, "POST", target, std::string(sql), std::chrono::milliseconds(ms + 5000), token_, options.cancel);
    if (!reply.isOk()) return Status::unavailable(host_port_ + ": " + reply.status().toString());
    if (reply->status == 200) {
      *body = std::move(reply->body);
      return Status::ok();
    }
    try {
      Json j = Json::parse(reply->body);
      if (!j.contains("error")) return Status::invalidArgument(reply->body);
      query::SourcePos pos;
      if (j.contains("line") && j.contains("column")) {
        pos.line = j["line"].get<uint32_t>();
        pos.column = j["column"].get<uint32_t>();
        size_t off = 0;  // the offset from line and column, for the caret
        for (uint32_t l = 1; l < pos.line && off != std::string_view::npos; ++l) off = sql.find('\n', off) + 1;
        pos.offset = static_cast<uint32_t>(off + pos.column - 1);
      }
      return queryError(j["error"].get<std::string>(), sql, pos);
    } catch (const Json::exception&) {
      return Status::invalidArgument(reply->body);
    }
  }

  Status unreadable(const Json::exception& e) const {
    return Status::corruption(host_port_ + " answered with JSON this client cannot read: " + e.what());
  }

  std::string host_port_;
  std::string host_;
  uint16_t port_;
  std::string token_;
};

}  // namespace

Result<std::vector<ColumnInfo>> QueryTarget::columns(std::string_view sql, const query::QueryOptions& options) {
  Result<std::string> answer = answerJson(sql, options);
  if (!answer.isOk()) return answer.status();
  std::vector<ColumnInfo> out;
  try {
    Json j = Json::parse(*answer);  // named: a temporary would die before the loop reads it
    for (const auto& c : j["columns"]) out.push_back({c["name"].get<std::string>(), c["type"].get<std::string>()});
  } catch (const Json::exception& e) {
    return Status::corruption(std::string("a query answer this client cannot read: ") + e.what());
  }
  return out;
}

bool parseOutputFormat(std::string_view text, OutputFormat* out) {
  if (text == "table") *out = OutputFormat::kTable;
  else if (text == "csv") *out = OutputFormat::kCsv;
  else if (text == "json") *out = OutputFormat::kJson;
  else return false;
  return true;
}

Result<std::unique_ptr<QueryTarget>> QueryTarget::openData(const std::string& data_dir) {
  auto store = storage::RocksStore::openReadOnly(data_dir);
  if (!store.isOk()) return Status::unavailable("cannot open " + data_dir + ": " + store.status().toString());
  return std::unique_ptr<QueryTarget>(std::make_unique<EmbeddedTarget>(std::move(store).value()));
}

Result<std::unique_ptr<QueryTarget>> QueryTarget::connect(const std::string& host_port, const std::string& token) {
  std::string host;
  uint16_t port = 0;
  ARGUS_RETURN_IF_ERROR(wire::parseHostPort(host_port, &host, &port));
  return std::unique_ptr<QueryTarget>(std::make_unique<ServerTarget>(host_port, host, port, token));
}

}  // namespace argus::cli
