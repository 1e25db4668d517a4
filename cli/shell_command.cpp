#include "cli/shell_command.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/shell_history.h"
#include "cli/shell_session.h"
#include "cli/target_options.h"
#include "cli/tty_line_reader.h"

namespace argus::cli {

namespace {

constexpr const char* kPrompt = "argus> ";
constexpr const char* kContinuationPrompt = "   ..> ";

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

int runShell(const TargetOptions& o) {
  OpenedTarget t;
  if (int code = openTarget(o, "shell", &t); code != 0) return code;
  ShellSession session(std::move(t.target), t.format, t.options);
  if (::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO)) return runInteractive(session, o.where());
  return runScript(session);
}

}  // namespace

void addShellCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<TargetOptions>();
  CLI::App* cmd = app.add_subcommand("shell", "Interactive query prompt (docs/query/language.md) on a data directory or against argusd");
  addTargetOptions(cmd, o.get());
  cmd->callback([o, exit_code] { *exit_code = runShell(*o); });
}

}  // namespace argus::cli
