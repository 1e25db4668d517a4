// LineEditor: the key handling of `argus shell`'s line editing (docs/cli/argus.md, "Keys"),
// as a state machine over input bytes with no terminal in it, so tests feed bytes and check
// the buffer and cursor. TtyLineReader puts the terminal in raw mode and draws it.
//
//   LineEditor editor(&history);
//   for (char c : typed) if (editor.feed(c) == LineEditor::Event::kSubmit) run(editor.buffer());
//
// Text is UTF-8: the cursor moves and deletes whole characters. A history entry may hold
// newlines (a statement written over several lines); it comes back as it was written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace argus::cli {

class LineEditor {
 public:
  enum class Event : uint8_t {
    kNone,    // keep reading
    kSubmit,  // Enter: buffer() is the line
    kCancel,  // Ctrl-C: the caller abandons the input and calls reset()
    kEof,     // Ctrl-D on an empty line
  };

  // `history` (oldest first) is read by up/down and must outlive the editor.
  explicit LineEditor(const std::vector<std::string>* history) : history_(history) { reset(); }

  // An empty line, the history position after the newest entry.
  void reset();
  Event feed(char byte);

  const std::string& buffer() const { return buffer_; }
  size_t cursor() const { return cursor_; }  // byte offset into buffer()

 private:
  Event control(char byte);
  void escapeSequence(char final_byte);
  void insert(char byte);
  size_t charBefore(size_t pos) const;
  size_t charAfter(size_t pos) const;
  void erase(size_t from, size_t to);
  void recall(size_t position);

  const std::vector<std::string>* history_;
  std::string buffer_;
  size_t cursor_ = 0;
  std::string escape_;    // an unfinished escape sequence, from its ESC
  size_t history_pos_ = 0;  // history_->size(): the line being written
  std::string draft_;     // the line being written while up/down show history
};

}  // namespace argus::cli
