#include "cli/query_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "cli/duration_text.h"
#include "cli/target_options.h"
#include "query/result_writer.h"

namespace argus::cli {

namespace {

struct QueryCommandOptions {
  TargetOptions target;
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

void printStats(const query::QueryStats& s) {
  double secs = static_cast<double>(s.elapsed_ns) / 1e9;
  std::fprintf(stderr, "%llu rows in %s; scanned %llu rows, %llu values (%.1f M values/s) in %llu jobs; chunks read %llu, skipped %llu; peak memory %s\n",
               static_cast<unsigned long long>(s.rows), formatDurationNs(static_cast<double>(s.elapsed_ns)).c_str(),
               static_cast<unsigned long long>(s.rows_scanned), static_cast<unsigned long long>(s.values_scanned),
               secs > 0 ? static_cast<double>(s.values_scanned) / secs / 1e6 : 0.0, static_cast<unsigned long long>(s.jobs_scanned),
               static_cast<unsigned long long>(s.chunks_read), static_cast<unsigned long long>(s.chunks_skipped),
               query::bytesText(s.peak_memory_bytes).c_str());
}

int runQuery(const QueryCommandOptions& o) {
  auto memory = parseBytes(o.memory);
  if (!memory.isOk()) return usageError("--memory: " + memory.status().message());
  OpenedTarget t;
  if (int code = openTarget(o.target, "query", &t); code != 0) return code;
  t.options.memory_limit_bytes = *memory;
  t.options.pushdown = !o.no_pushdown;
  query::QueryStats stats;
  if (Status s = t.target->run(o.sql, t.format, t.options, &stats); !s.isOk()) {
    std::fprintf(stderr, "argus query: %s\n", s.message().c_str());
    return 1;
  }
  if (o.stats && o.target.server.empty()) printStats(stats);
  return 0;
}

}  // namespace

void addQueryCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<QueryCommandOptions>();
  CLI::App* cmd = app.add_subcommand("query", "Run a query (docs/query/language.md) on a data directory or against argusd");
  addTargetOptions(cmd, &o->target);
  cmd->add_option("--memory", o->memory, "memory cap of the query (512MiB, 1GiB)")->capture_default_str();
  cmd->add_flag("--no-pushdown", o->no_pushdown, "scan every job and step, filter afterwards (same answers; for comparisons)");
  cmd->add_flag("--stats", o->stats, "print rows and values scanned, chunks and time on stderr");
  cmd->add_option("sql", o->sql, "the query, e.g. \"SELECT step, max(iter_ns) FROM steps WHERE job = 'a' GROUP BY step\"")->required();
  cmd->callback([o, exit_code] { *exit_code = runQuery(*o); });
}

}  // namespace argus::cli
