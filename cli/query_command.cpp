#include "cli/query_command.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/duration_text.h"
#include "cli/http_client.h"
#include "cli/table_printer.h"
#include "query/engine.h"
#include "query/result_writer.h"
#include "storage/store.h"
#include "wire/tcp.h"

namespace argus::cli {

namespace {

struct QueryCommandOptions {
  std::string data_dir;
  std::string server;
  std::string format = "table";
  std::string timeout = "30s";
  std::string memory = "1GiB";
  bool no_pushdown = false;
  bool stats = false;
  std::string sql;
};

// "1GiB", "512MiB", "64KiB", "4096" (bytes); K, M, G, T with or without "iB"/"B" are powers of 1024.
Result<size_t> parseBytes(std::string_view text) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    if (v > (UINT64_MAX - 9) / 10) return Status::invalidArgument("memory size '" + std::string(text) + "' is too large");
    v = v * 10 + static_cast<uint64_t>(text[i++] - '0');
  }
  if (i == 0) return Status::invalidArgument("memory size '" + std::string(text) + "': expected a number, e.g. 512MiB");
  std::string unit(text.substr(i));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  if (unit == "K" || unit == "KB" || unit == "KIB") shift = 10;
  if (unit == "M" || unit == "MB" || unit == "MIB") shift = 20;
  if (unit == "G" || unit == "GB" || unit == "GIB") shift = 30;
  if (unit == "T" || unit == "TB" || unit == "TIB") shift = 40;
  if (shift < 0) return Status::invalidArgument("memory size '" + std::string(text) + "': unknown unit (B, KiB, MiB, GiB, TiB)");
  if (shift > 0 && v > (UINT64_MAX >> shift)) return Status::invalidArgument("memory size '" + std::string(text) + "' is too large");
  return static_cast<size_t>(v << shift);
}

int usageError(const std::string& what) {
  std::fprintf(stderr, "argus query: %s\n", what.c_str());
  return 2;
}

void printTable(const query::QueryResult& r) {
  TablePrinter table(r.names);
  for (size_t row = 0; row < r.rows; ++row) {
    std::vector<std::string> cells;
    for (const query::Vector& v : r.columns) cells.push_back(query::cellText(v, row));
    table.addRow(std::move(cells));
  }
  table.print(stdout);
  std::printf("(%zu row%s)\n", r.rows, r.rows == 1 ? "" : "s");
}

void printStats(const query::QueryStats& s) {
  double secs = static_cast<double>(s.elapsed_ns) / 1e9;
  std::fprintf(stderr, "%llu rows in %s; scanned %llu rows, %llu values (%.1f M values/s) in %llu jobs; chunks read %llu, skipped %llu; peak memory %s\n",
               static_cast<unsigned long long>(s.rows), formatDurationNs(static_cast<double>(s.elapsed_ns)).c_str(),
               static_cast<unsigned long long>(s.rows_scanned), static_cast<unsigned long long>(s.values_scanned),
               secs > 0 ? static_cast<double>(s.values_scanned) / secs / 1e6 : 0.0, static_cast<unsigned long long>(s.jobs_scanned),
               static_cast<unsigned long long>(s.chunks_read), static_cast<unsigned long long>(s.chunks_skipped),
               query::bytesText(s.peak_memory_bytes).c_str());
}

int runEmbedded(const QueryCommandOptions& o, const query::QueryOptions& qo) {
  storage::StoreOptions so;
  so.create_if_missing = false;
  so.read_only = true;
  auto store = storage::Store::open(o.data_dir, so);
  if (!store.isOk()) {
    std::fprintf(stderr, "argus query: cannot open %s: %s\n", o.data_dir.c_str(), store.status().toString().c_str());
    return 1;
  }
  query::QueryResult r;
  try {
    r = query::QueryEngine(**store).run(o.sql, qo);
  } catch (const query::QueryError& e) {
    std::fprintf(stderr, "argus query: %s\n%s", e.what(), query::caretText(o.sql, e.pos()).c_str());
    return 1;
  }
  std::string out;
  if (o.format == "json") {
    query::writeJson(r, &out);
    out.push_back('\n');
  } else if (o.format == "csv") {
    query::writeCsv(r, &out);
  } else {
    printTable(r);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (o.stats) printStats(r.stats);
  return 0;
}

int runRemote(const QueryCommandOptions& o, const query::QueryOptions& qo) {
  std::string host;
  uint16_t port = 0;
  if (Status s = wire::parseHostPort(o.server, &host, &port); !s.isOk()) return usageError("--server: " + s.message());
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(qo.deadline).count();
  std::string target = "/api/v1/query?format=" + std::string(o.format == "csv" ? "csv" : "json") + "&timeout_ms=" + std::to_string(ms) +
                       "&memory_limit=" + std::to_string(qo.memory_limit_bytes) + (qo.pushdown ? "" : "&pushdown=off");
  auto reply = httpRequest(host, port, "POST", target, o.sql, std::chrono::milliseconds(ms + 5000));
  if (!reply.isOk()) {
    std::fprintf(stderr, "argus query: %s: %s\n", o.server.c_str(), reply.status().toString().c_str());
    return 1;
  }
  if (reply->status != 200) {
    std::string message = reply->body;
    try {
      auto j = nlohmann::json::parse(reply->body);
      if (j.contains("error")) message = j["error"].get<std::string>();
      if (j.contains("line") && j.contains("column")) {
        query::SourcePos p{j["line"].get<uint32_t>(), j["column"].get<uint32_t>(), 0};
        // Offset from line and column, for the caret.
        size_t off = 0;
        for (uint32_t l = 1; l < p.line && off != std::string::npos; ++l) off = o.sql.find('\n', off) + 1;
        p.offset = static_cast<uint32_t>(off + p.column - 1);
        message += "\n" + query::caretText(o.sql, p);
        if (message.back() == '\n') message.pop_back();
      }
    } catch (const nlohmann::json::exception&) {
    }
    std::fprintf(stderr, "argus query: %s\n", message.c_str());
    return 1;
  }
  if (o.format != "table") {
    std::fwrite(reply->body.data(), 1, reply->body.size(), stdout);
    if (o.format == "json") std::fputc('\n', stdout);
    return 0;
  }
  try {
    auto j = nlohmann::json::parse(reply->body);
    std::vector<std::string> header;
    for (const auto& c : j["columns"]) header.push_back(c["name"].get<std::string>());
    TablePrinter table(header);
    size_t rows = 0;
    for (const auto& row : j["rows"]) {
      std::vector<std::string> cells;
      for (const auto& cell : row) {
        if (cell.is_null()) {
          cells.push_back("NULL");
        } else if (cell.is_string()) {
          cells.push_back(cell.get<std::string>());
        } else if (cell.is_object()) {
          cells.push_back(query::histogramText(cell["count"].get<uint64_t>(), cell["p50"].get<double>(), cell["p90"].get<double>(),
                                               cell["p99"].get<double>()));
        } else if (cell.is_number_float()) {
          cells.push_back(query::doubleText(cell.get<double>()));
        } else {
          cells.push_back(cell.dump());
        }
      }
      table.addRow(std::move(cells));
      ++rows;
    }
    table.print(stdout);
    std::printf("(%zu row%s)\n", rows, rows == 1 ? "" : "s");
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "argus query: %s answered with JSON this client cannot read: %s\n", o.server.c_str(), e.what());
    return 1;
  }
  return 0;
}

int runQuery(const QueryCommandOptions& o) {
  if (o.data_dir.empty() == o.server.empty()) return usageError("give exactly one of --data DIR and --server HOST:PORT");
  if (o.format != "table" && o.format != "csv" && o.format != "json") return usageError("--format must be table, csv or json");
  query::QueryOptions qo;
  auto timeout = parseDurationNs(o.timeout);
  if (!timeout.isOk()) return usageError("--timeout: " + timeout.status().message());
  qo.deadline = std::chrono::nanoseconds(*timeout);
  auto memory = parseBytes(o.memory);
  if (!memory.isOk()) return usageError("--memory: " + memory.status().message());
  qo.memory_limit_bytes = *memory;
  qo.pushdown = !o.no_pushdown;
  return o.server.empty() ? runEmbedded(o, qo) : runRemote(o, qo);
}

}  // namespace

void addQueryCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<QueryCommandOptions>();
  CLI::App* cmd = app.add_subcommand("query", "Run a query (docs/query/language.md) on a data directory or against argusd");
  cmd->add_option("--data", o->data_dir, "data directory, opened read-only (argusd may keep running on it)");
  cmd->add_option("--server", o->server, "argusd HTTP address HOST:PORT");
  cmd->add_option("--format", o->format, "table, csv or json")->capture_default_str();
  cmd->add_option("--timeout", o->timeout, "deadline of the query (250ms, 30s, 2m)")->capture_default_str();
  cmd->add_option("--memory", o->memory, "memory cap of the query (512MiB, 1GiB)")->capture_default_str();
  cmd->add_flag("--no-pushdown", o->no_pushdown, "scan every job and step, filter afterwards (same answers; for comparisons)");
  cmd->add_flag("--stats", o->stats, "print rows and values scanned, chunks and time on stderr");
  cmd->add_option("sql", o->sql, "the query, e.g. \"SELECT step, max(iter_ns) FROM steps WHERE job = 'a' GROUP BY step\"")->required();
  cmd->callback([o, exit_code] { *exit_code = runQuery(*o); });
}

}  // namespace argus::cli
