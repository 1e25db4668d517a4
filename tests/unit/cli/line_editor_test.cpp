// The line editor's keys, fed as the bytes a terminal sends.
#include <doctest/doctest.h>

#include "cli/line_editor.h"

using argus::cli::LineEditor;
using Event = LineEditor::Event;

namespace {

const std::string kLeft = "\x1b[D", kRight = "\x1b[C", kUp = "\x1b[A", kDown = "\x1b[B";
const std::string kHome = "\x1b[H", kEnd = "\x1b[F", kDelete = "\x1b[3~";

// Feeds every byte; returns the last event.
Event type(LineEditor& e, const std::string& bytes) {
  Event last = Event::kNone;
  for (char c : bytes) last = e.feed(c);
  return last;
}

}  // namespace

TEST_CASE("printable keys insert at the cursor, arrows and home/end move it") {
  std::vector<std::string> history;
  LineEditor e(&history);
  type(e, "SELEC 1");
  CHECK(e.cursor() == 7);
  type(e, kLeft + kLeft + "T");
  CHECK(e.buffer() == "SELECT 1");
  CHECK(e.cursor() == 6);
  type(e, kHome);
  CHECK(e.cursor() == 0);
  type(e, kEnd + ";");
  CHECK(e.buffer() == "SELECT 1;");
  type(e, "\x01-");  // Ctrl-A
  CHECK(e.buffer() == "-SELECT 1;");
  type(e, "\x05");  // Ctrl-E
  CHECK(e.cursor() == e.buffer().size());
  type(e, "\x1bOH");  // Home as VT100 keypads send it
  CHECK(e.cursor() == 0);
  for (const char* home : {"\x1b[1~", "\x1b[7~"}) {
    type(e, kEnd + home);
    CHECK(e.cursor() == 0);
  }
  type(e, kLeft);  // at the start: stays
  CHECK(e.cursor() == 0);
  type(e, kEnd + kRight + "\x1b[1;5C");  // past the end, and Ctrl-Right: stays
  CHECK(e.cursor() == e.buffer().size());
  CHECK(type(e, "\r") == Event::kSubmit);
  CHECK(e.buffer() == "-SELECT 1;");
}

TEST_CASE("backspace, delete, Ctrl-U, Ctrl-K and Ctrl-W") {
  std::vector<std::string> history;
  LineEditor e(&history);
  type(e, "SELECT 12x");
  type(e, "\x7f");
  CHECK(e.buffer() == "SELECT 12");
  type(e, kHome + kDelete + "\x08");  // backspace at the start does nothing
  CHECK(e.buffer() == "ELECT 12");
  type(e, "\x04");  // Ctrl-D on a line with text deletes under the cursor
  CHECK(e.buffer() == "LECT 12");
  CHECK(e.cursor() == 0);
  type(e, kRight + kRight + "\x0b");  // Ctrl-K
  CHECK(e.buffer() == "LE");
  type(e, kLeft + "\x15");  // Ctrl-U
  CHECK(e.buffer() == "E");
  CHECK(e.cursor() == 0);
  e.reset();
  type(e, "SELECT step  FROM  ");
  type(e, "\x17");  // Ctrl-W: the word before the cursor and the spaces after it
  CHECK(e.buffer() == "SELECT step  ");
  type(e, "\x17");
  CHECK(e.buffer() == "SELECT ");
  type(e, "\x17\x17");
  CHECK(e.buffer().empty());
}

TEST_CASE("UTF-8 characters move and delete whole") {
  std::vector<std::string> history;
  LineEditor e(&history);
  type(e, "'\xc3\xa9t\xc3\xa9'");  // 'été'
  type(e, kLeft + kLeft);
  CHECK(e.cursor() == 4);
  type(e, "\x7f");
  CHECK(e.buffer() == "'\xc3\xa9\xc3\xa9'");
  type(e, kLeft + kDelete);
  CHECK(e.buffer() == "'\xc3\xa9'");
}

TEST_CASE("up and down walk the history and come back to the line being written") {
  std::vector<std::string> history = {"SELECT 1;", "SELECT\n  2;"};
  LineEditor e(&history);
  type(e, "SEL");
  type(e, kUp);
  CHECK(e.buffer() == "SELECT\n  2;");
  CHECK(e.cursor() == e.buffer().size());
  type(e, kUp);
  CHECK(e.buffer() == "SELECT 1;");
  type(e, kUp);  // the oldest: stays
  CHECK(e.buffer() == "SELECT 1;");
  type(e, "\x7f" + kDown);
  CHECK(e.buffer() == "SELECT\n  2;");
  type(e, kDown);
  CHECK(e.buffer() == "SEL");
  type(e, kDown + "\x0e");  // past the newest, and Ctrl-N: stays
  CHECK(e.buffer() == "SEL");
  type(e, "\x10");  // Ctrl-P
  CHECK(e.buffer() == "SELECT\n  2;");
  CHECK(type(e, "\n") == Event::kSubmit);
}

TEST_CASE("Ctrl-C cancels, Ctrl-D on an empty line ends, other keys are ignored") {
  std::vector<std::string> history = {"x"};
  LineEditor e(&history);
  type(e, "SELECT");
  CHECK(type(e, "\x03") == Event::kCancel);
  e.reset();
  CHECK(e.buffer().empty());
  CHECK(type(e, "\x04") == Event::kEof);
  type(e, "\x07\x1bx\x1b[5~a\tb");  // bell, Alt-x, Page Up, a tab
  CHECK(e.buffer() == "a b");
}
