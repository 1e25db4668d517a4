// TtyLineReader: reads lines from a terminal with LineEditor's keys. The terminal is in raw
// mode only while a line is being read, and goes back to how it was after each line, when the
// reader is destroyed, and on SIGTERM, SIGHUP, SIGQUIT or SIGABRT (the handler restores it,
// then lets the signal do what it would have done). SIGINT is the shell's: it cancels the
// running statement (in raw mode Ctrl-C is a key, not a signal).
#pragma once

#include <string>
#include <vector>

#include "cli/line_editor.h"

namespace argus::cli {

class TtyLineReader {
 public:
  enum class Outcome : uint8_t { kLine, kCancelled, kEof };

  // REQUIRES: stdin and stdout are terminals. `history` must outlive the reader.
  explicit TtyLineReader(const std::vector<std::string>* history);
  ~TtyLineReader();
  TtyLineReader(const TtyLineReader&) = delete;
  TtyLineReader& operator=(const TtyLineReader&) = delete;

  // Shows `prompt` and edits a line until Enter (kLine, the text in *line), Ctrl-C
  // (kCancelled) or Ctrl-D on an empty line or the end of input (kEof).
  Outcome readLine(const std::string& prompt, std::string* line);

 private:
  void redraw(const std::string& prompt);

  LineEditor editor_;
  size_t scroll_ = 0;  // first character shown when the line is wider than the terminal
};

}  // namespace argus::cli
