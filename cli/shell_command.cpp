#include "cli/shell_command.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/duration_text.h"
#include "cli/http_client.h"
#include "cli/shell_history.h"
#include "cli/shell_session.h"
#include "cli/tty_line_reader.h"
#include "wire/tcp.h"

namespace argus::cli {

namespace {

struct ShellCommandOptions {
  std::string data_dir;
  std::string server;
  std::string token;
  std::string format = "table";
  std::string timeout = "30s";
};

constexpr const char* kPrompt = "argus> ";
constexpr const char* kContinuationPrompt = "   ..> ";

int usageError(const std::string& what) {
  std::fprintf(stderr, "argus shell: %s\n", what.c_str());
  return 2;
}

// Prompts, line editing and history; 0 on \q, Ctrl-D or the end of input.
int runInteractive(ShellSession& session, const std::string& where) {
  ShellHistory history(ShellHistory::defaultPath());
  TtyLineReader reader(&history.entries());
  std::printf("argus shell on %s; \\help for help, \\q to quit\n", where.c_str());
  std::fflush(stdout);
  std::string entry;  // the lines of the statement being written: one history entry
  for (;;) {
    std::string line;
    TtyLineReader::Outcome outcome = reader.readLine(session.pending() ? kContinuationPrompt : kPrompt, &line);
    if (outcome == TtyLineReader::Outcome::kEof) return 0;
    if (outcome == TtyLineReader::Outcome::kCancelled) {
      session.cancel();
      entry.clear();
      continue;
    }
    entry += (entry.empty() ? "" : "\n") + line;
    bool go_on = session.feedLine(line);
    if (!session.pending()) {
      history.add(entry);
      entry.clear();
    }
    if (!go_on) return 0;
  }
}

// Scripts and pipes: no prompts, no escape codes; 1 when anything failed.
int runScript(ShellSession& session) {
  for (std::string line; std::getline(std::cin, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!session.feedLine(line)) return session.anyFailed() ? 1 : 0;
  }
  session.finish();
  return session.anyFailed() ? 1 : 0;
}

int runShell(const ShellCommandOptions& o) {
  if (o.data_dir.empty() == o.server.empty()) return usageError("give exactly one of --data DIR and --server HOST:PORT");
  OutputFormat format = OutputFormat::kTable;
  if (!parseOutputFormat(o.format, &format)) return usageError("--format must be table, csv or json");
  query::QueryOptions qo;
  auto timeout = parseDurationNs(o.timeout);
  if (!timeout.isOk()) return usageError("--timeout: " + timeout.status().message());
  qo.deadline = std::chrono::nanoseconds(*timeout);
  std::string host;
  uint16_t port = 0;
  if (Status s = wire::parseHostPort(o.server, &host, &port); !o.server.empty() && !s.isOk()) return usageError("--server: " + s.message());
  auto target = o.server.empty() ? QueryTarget::openData(o.data_dir) : QueryTarget::connect(o.server, httpToken(o.token));
  if (!target.isOk()) {
    std::fprintf(stderr, "argus shell: %s\n", target.status().message().c_str());
    return 1;
  }
  ShellSession session(std::move(*target), format, qo);
  if (::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO)) {
    return runInteractive(session, o.server.empty() ? o.data_dir + " (embedded, as of now)" : "argusd at " + o.server);
  }
  return runScript(session);
}

}  // namespace

void addShellCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ShellCommandOptions>();
  CLI::App* cmd = app.add_subcommand("shell", "Interactive query prompt (docs/query/language.md) on a data directory or against argusd");
  cmd->add_option("--data", o->data_dir, "data directory, opened read-only (argusd may keep running on it)");
  cmd->add_option("--server", o->server, "argusd HTTP address HOST:PORT");
  cmd->add_option("--token", o->token, "bearer token for argusd --http-tokens (default: $ARGUS_HTTP_TOKEN)");
  cmd->add_option("--format", o->format, "table, csv or json (\\format changes it)")->capture_default_str();
  cmd->add_option("--timeout", o->timeout, "deadline of each statement (250ms, 30s, 2m)")->capture_default_str();
  cmd->callback([o, exit_code] { *exit_code = runShell(*o); });
}

}  // namespace argus::cli
