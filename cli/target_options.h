// TargetOptions: the options `argus query` and `argus shell` share (docs/cli/argus.md):
// where statements run (--data DIR, or --server HOST:PORT with --token) and how
// (--format, --timeout), and opening that target from them.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "cli/query_target.h"
#include "query/common/query_context.h"

namespace argus::cli {

struct TargetOptions {
  std::string data_dir;
  std::string server;
  std::string token;
  std::string format = "table";
  std::string timeout = "30s";

  // "DIR (embedded, as of now)" or "argusd at HOST:PORT", for banners.
  std::string where() const;
};

void addTargetOptions(CLI::App* cmd, TargetOptions* o);

struct OpenedTarget {
  std::unique_ptr<QueryTarget> target;
  OutputFormat format = OutputFormat::kTable;
  query::QueryOptions options;  // the deadline from --timeout; the rest defaults
};

// Checks the options and opens the target. On failure prints "argus COMMAND: why" on stderr
// and returns the exit code: 2 for options that make no sense, 1 when the target cannot be
// opened. 0 on success.
int openTarget(const TargetOptions& o, const char* command, OpenedTarget* out);

}  // namespace argus::cli
