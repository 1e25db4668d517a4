#include "cli/line_editor.h"

namespace argus::cli {

namespace {

constexpr char ctrl(char letter) { return static_cast<char>(letter & 0x1f); }
constexpr char kEsc = 0x1b;
constexpr char kDel = 0x7f;

bool isContinuation(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

}  // namespace

void LineEditor::reset() {
  buffer_.clear();
  cursor_ = 0;
  escape_.clear();
  history_pos_ = history_->size();
  draft_.clear();
}

LineEditor::Event LineEditor::feed(char byte) {
  if (!escape_.empty()) {
    // ESC [ params final, or ESC O final (xterm, VT100 keypad); anything else after ESC
    // (Alt+key) is dropped with it.
    escape_.push_back(byte);
    if (escape_.size() == 2) {
      if (byte != '[' && byte != 'O') escape_.clear();
      return Event::kNone;
    }
    if (escape_[1] == 'O' || (byte >= 0x40 && byte <= 0x7e)) {
      escapeSequence(byte);
      escape_.clear();
    }
    return Event::kNone;
  }
  if (byte == kEsc) {
    escape_.push_back(byte);
    return Event::kNone;
  }
  if (static_cast<unsigned char>(byte) < 0x20 || byte == kDel) return control(byte);
  insert(byte);
  return Event::kNone;
}

LineEditor::Event LineEditor::control(char byte) {
  switch (byte) {
    case '\r':
    case '\n': return Event::kSubmit;
    case ctrl('C'): return Event::kCancel;
    case ctrl('D'):
      if (buffer_.empty()) return Event::kEof;
      erase(cursor_, charAfter(cursor_));
      break;
    case ctrl('A'): cursor_ = 0; break;
    case ctrl('E'): cursor_ = buffer_.size(); break;
    case ctrl('B'): cursor_ = charBefore(cursor_); break;
    case ctrl('F'): cursor_ = charAfter(cursor_); break;
    case ctrl('H'):
    case kDel: erase(charBefore(cursor_), cursor_); break;
    case ctrl('U'): erase(0, cursor_); break;
    case ctrl('K'): erase(cursor_, buffer_.size()); break;
    case ctrl('W'): {
      size_t from = cursor_;
      while (from > 0 && (buffer_[from - 1] == ' ' || buffer_[from - 1] == '\n')) --from;
      while (from > 0 && buffer_[from - 1] != ' ' && buffer_[from - 1] != '\n') --from;
      erase(from, cursor_);
      break;
    }
    case ctrl('P'): if (history_pos_ > 0) recall(history_pos_ - 1); break;
    case ctrl('N'): if (history_pos_ < history_->size()) recall(history_pos_ + 1); break;
    case '\t': insert(' '); break;  // a tab would throw the cursor arithmetic off
    default: break;                 // other control keys do nothing
  }
  return Event::kNone;
}

void LineEditor::escapeSequence(char final_byte) {
  // The parameter of ESC [ n ~ (1 and 7 Home, 4 and 8 End, 3 Delete).
  const std::string params = escape_.substr(2, escape_.size() - 3);
  switch (final_byte) {
    case 'A': control(ctrl('P')); break;
    case 'B': control(ctrl('N')); break;
    case 'C': control(ctrl('F')); break;
    case 'D': control(ctrl('B')); break;
    case 'H': control(ctrl('A')); break;
    case 'F': control(ctrl('E')); break;
    case '~':
      if (params == "1" || params == "7") control(ctrl('A'));
      if (params == "4" || params == "8") control(ctrl('E'));
      if (params == "3") erase(cursor_, charAfter(cursor_));
      break;
    default: break;
  }
}

void LineEditor::insert(char byte) { buffer_.insert(cursor_++, 1, byte); }

size_t LineEditor::charBefore(size_t pos) const {
  if (pos == 0) return 0;
  --pos;
  while (pos > 0 && isContinuation(buffer_[pos])) --pos;
  return pos;
}

size_t LineEditor::charAfter(size_t pos) const {
  if (pos >= buffer_.size()) return buffer_.size();
  ++pos;
  while (pos < buffer_.size() && isContinuation(buffer_[pos])) ++pos;
  return pos;
}

void LineEditor::erase(size_t from, size_t to) {
  buffer_.erase(from, to - from);
  cursor_ = from;
}

void LineEditor::recall(size_t position) {
  if (history_pos_ == history_->size()) draft_ = buffer_;
  history_pos_ = position;
  buffer_ = position == history_->size() ? draft_ : (*history_)[position];
  cursor_ = buffer_.size();
}

}  // namespace argus::cli
