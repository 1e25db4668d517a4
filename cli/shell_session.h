// ShellSession: what `argus shell` does with its input, whatever it comes from (a terminal
// or a pipe): collects lines into statements (statement_splitter.h), runs them on a
// QueryTarget in order, prints results and errors, and runs the meta-commands (\timing,
// \format, \tables, \functions, \describe, \help, \q). docs/cli/argus.md, "argus shell".
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "cli/query_target.h"

namespace argus::cli {

class ShellSession {
 public:
  ShellSession(std::unique_ptr<QueryTarget> target, OutputFormat format, const query::QueryOptions& options)
      : target_(std::move(target)), format_(format), options_(options) {}

  // Takes one line of input (without its newline) and runs what it completes: the
  // statements it ends, or the meta-command it is when no statement is open. Returns false
  // once \q or \quit asks the shell to end.
  bool feedLine(std::string_view line);
  // The end of input: an unfinished statement runs as if it ended with `;`.
  void finish();
  // Drops the unfinished statement (Ctrl-C).
  void cancel() { pending_.clear(); }

  // A statement has begun and not ended: the continuation prompt.
  bool pending() const { return !pending_.empty(); }
  // Some statement or meta-command failed.
  bool anyFailed() const { return failed_; }

 private:
  void runStatement(const std::string& sql);
  // Returns false for \q.
  bool runMeta(std::string_view line);
  void printTables();
  void printFunctions();
  void describe(const std::string& table);
  void fail(const std::string& message);

  std::unique_ptr<QueryTarget> target_;
  OutputFormat format_;
  query::QueryOptions options_;
  bool timing_ = false;
  bool failed_ = false;
  std::string pending_;  // the unfinished statement, its lines each ended with '\n'
};

}  // namespace argus::cli
