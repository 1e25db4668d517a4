#include "cli/shell_session.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <vector>

#include "cli/duration_text.h"
#include "cli/statement_splitter.h"
#include "cli/table_printer.h"
#include "query/binder/catalog.h"
#include "query/function/table_function_registry.h"

namespace argus::cli {

namespace {

constexpr const char* kHelp = R"(Statements end with ';' and may span lines; several may share a line.
EXPLAIN SELECT ... shows the plan; EXPLAIN ANALYZE SELECT ... runs the query and shows what
each operator produced and the time it took.
Meta-commands (one line, no ';'):
  \timing [on|off]            print the time each statement took
  \format table|csv|json      how results print
  \tables                     the tables you can query
  \functions                  the table functions (FROM f(...)) and their parameters
  \describe TABLE             the columns and types of TABLE
  \help                       this text
  \q, \quit                   leave (so does Ctrl-D on an empty line)
Keys: left/right, Home/End (Ctrl-A/Ctrl-E), Backspace/Delete, Ctrl-U/Ctrl-K/Ctrl-W,
up/down for history, Ctrl-C abandons the input. The language: docs/query/language.md.
)";

bool isIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

bool ShellSession::feedLine(std::string_view line) {
  if (!pending()) {
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] == '\\') return runMeta(line.substr(first));
  }
  pending_.append(line);
  pending_.push_back('\n');
  SplitInput split = splitStatements(pending_);
  pending_ = std::move(split.rest);
  for (const std::string& sql : split.statements) runStatement(sql);
  return true;
}

void ShellSession::finish() {
  if (pending()) runStatement(pending_);
  pending_.clear();
}

void ShellSession::runStatement(const std::string& sql) {
  auto start = std::chrono::steady_clock::now();
  Status s = target_->run(sql, format_, options_, nullptr);
  auto elapsed = std::chrono::steady_clock::now() - start;
  if (!s.isOk()) return fail(s.message());
  if (timing_) std::printf("Time: %s\n", formatDurationNs(static_cast<double>(std::chrono::nanoseconds(elapsed).count())).c_str());
  std::fflush(stdout);
}

bool ShellSession::runMeta(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string command;
  std::vector<std::string> args;
  in >> command;
  for (std::string word; in >> word;) args.push_back(word);
  auto takesAtMost = [&](size_t n) {
    if (args.size() <= n) return true;
    fail(command + ": too many arguments; \\help lists the meta-commands");
    return false;
  };
  if (command == "\\q" || command == "\\quit") {
    return !takesAtMost(0);
  } else if (command == "\\timing") {
    if (!takesAtMost(1)) return true;
    if (args.empty() || args[0] == "on" || args[0] == "off") {
      timing_ = args.empty() ? !timing_ : args[0] == "on";
      std::printf("Timing is %s.\n", timing_ ? "on" : "off");
    } else {
      fail("\\timing: expected on or off, not '" + args[0] + "'");
    }
  } else if (command == "\\format") {
    if (!takesAtMost(1)) return true;
    if (args.empty()) {
      std::printf("Format is %s.\n", format_ == OutputFormat::kTable ? "table" : format_ == OutputFormat::kCsv ? "csv" : "json");
    } else if (parseOutputFormat(args[0], &format_)) {
      std::printf("Format is %s.\n", args[0].c_str());
    } else {
      fail("\\format: expected table, csv or json, not '" + args[0] + "'");
    }
  } else if (command == "\\tables") {
    if (takesAtMost(0)) printTables();
  } else if (command == "\\functions") {
    if (takesAtMost(0)) printFunctions();
  } else if (command == "\\describe" || command == "\\d") {
    if (args.size() != 1) {
      fail(command + ": expected one table name, e.g. \\describe steps");
    } else {
      describe(args[0]);
    }
  } else if (command == "\\help" || command == "\\?") {
    std::fputs(kHelp, stdout);
  } else {
    fail("unknown meta-command '" + command + "'; \\help lists them");
  }
  std::fflush(stdout);
  return true;
}

void ShellSession::printTables() {
  TablePrinter table({"table", "description"});
  for (const query::TableInfo& t : query::catalogTables()) table.addRow({t.name, t.description});
  table.print(stdout);
}

void ShellSession::printFunctions() {
  TablePrinter table({"table function", "description"});
  for (const query::TableFunction* f : query::TableFunctionRegistry::instance().all()) table.addRow({f->signature(), f->doc()});
  table.print(stdout);
}

void ShellSession::describe(const std::string& table) {
  // The target answers for itself (a server may run another version than this binary).
  if (!isIdentifier(table)) return fail("\\describe: '" + table + "' is not a table name; \\tables lists them");
  auto columns = target_->columns("SELECT * FROM " + table + " LIMIT 0", options_);
  if (!columns.isOk()) {
    // Without the caret: it would point into the statement the shell wrote, not the user.
    const std::string& message = columns.status().message();
    return fail(message.substr(0, message.find('\n')));
  }
  TablePrinter printer({"column", "type"});
  for (const ColumnInfo& c : *columns) printer.addRow({c.name, c.type});
  printer.print(stdout);
}

void ShellSession::fail(const std::string& message) {
  failed_ = true;
  std::fflush(stdout);  // results before the error stay before it on a shared terminal or pipe
  std::fprintf(stderr, "%s\n", message.c_str());
}

}  // namespace argus::cli
