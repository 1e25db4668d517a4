#include "cli/shell_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
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

// Ctrl-C while statements run (the line editor reads it as a key otherwise): the running
// statement stops at its next check, and so do the rest of that input's statements.
std::atomic<bool> interrupted{false};
extern "C" void onInterrupt(int) { interrupted.store(true); }

void catchInterrupts() {
  struct sigaction sa = {};
  sa.sa_handler = onInterrupt;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
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
    interrupted.store(false);
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
  if (::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO)) {
    catchInterrupts();
    t.options.cancel = &interrupted;
    ShellSession session(std::move(t.target), t.format, t.options);
    return runInteractive(session, o.where());
  }
  ShellSession session(std::move(t.target), t.format, t.options);
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
