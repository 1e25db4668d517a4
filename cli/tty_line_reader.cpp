#include "cli/tty_line_reader.h"

#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace argus::cli {

namespace {

// The terminal as it was, for the signal handler: written before raw mode is entered.
termios g_saved;
volatile sig_atomic_t g_raw = 0;
constexpr int kRestoringSignals[] = {SIGTERM, SIGHUP, SIGQUIT, SIGABRT};

void restoreTerminal() {
  if (g_raw) ::tcsetattr(STDIN_FILENO, TCSANOW, &g_saved);
  g_raw = 0;
}

void onSignal(int sig) {
  restoreTerminal();
  std::signal(sig, SIG_DFL);
  ::raise(sig);
}

void enterRaw() {
  termios raw = g_saved;
  // Keys arrive one byte at a time, unechoed, Ctrl-C and Ctrl-D as bytes; output processing
  // stays on so results print as in cooked mode.
  raw.c_iflag &= ~static_cast<tcflag_t>(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
  raw.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON | IEXTEN | ISIG);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  g_raw = 1;
  ::tcsetattr(STDIN_FILENO, TCSANOW, &raw);
}

void writeAll(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(STDOUT_FILENO, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

bool isContinuation(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

}  // namespace

TtyLineReader::TtyLineReader(const std::vector<std::string>* history) : editor_(history) {
  ::tcgetattr(STDIN_FILENO, &g_saved);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kRestoringSignals) ::sigaction(sig, &sa, nullptr);
}

TtyLineReader::~TtyLineReader() {
  restoreTerminal();
  for (int sig : kRestoringSignals) std::signal(sig, SIG_DFL);
}

TtyLineReader::Outcome TtyLineReader::readLine(const std::string& prompt, std::string* line) {
  editor_.reset();
  scroll_ = 0;
  enterRaw();
  redraw(prompt);
  Outcome outcome = Outcome::kEof;
  for (;;) {
    char c = 0;
    ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    LineEditor::Event event = editor_.feed(c);
    if (event == LineEditor::Event::kNone) {
      redraw(prompt);
      continue;
    }
    if (event == LineEditor::Event::kSubmit) {
      *line = editor_.buffer();
      outcome = Outcome::kLine;
    } else if (event == LineEditor::Event::kCancel) {
      outcome = Outcome::kCancelled;
    }
    break;
  }
  // The line stays on screen as typed; ^C marks one abandoned.
  writeAll(outcome == Outcome::kCancelled ? "^C\r\n" : "\r\n");
  restoreTerminal();
  return outcome;
}

void TtyLineReader::redraw(const std::string& prompt) {
  // One screen line: the prompt and a window of the text that holds the cursor. Newlines of
  // a recalled multi-line entry show as spaces; a character is one column.
  const std::string& text = editor_.buffer();
  std::vector<size_t> starts;  // byte offset of each character
  size_t cursor_char = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (isContinuation(text[i])) continue;
    if (i < editor_.cursor()) cursor_char = starts.size() + 1;
    starts.push_back(i);
  }
  starts.push_back(text.size());
  winsize ws{};
  size_t width = ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
  size_t room = std::max<size_t>(width > prompt.size() + 1 ? width - prompt.size() - 1 : 0, 8);
  if (cursor_char < scroll_) scroll_ = cursor_char;
  if (cursor_char >= scroll_ + room) scroll_ = cursor_char - room + 1;
  size_t last = std::min(starts.size() - 1, scroll_ + room);
  std::string shown = text.substr(starts[scroll_], starts[last] - starts[scroll_]);
  std::replace(shown.begin(), shown.end(), '\n', ' ');
  std::string out = "\r" + prompt + shown + "\x1b[K\r";
  size_t column = prompt.size() + cursor_char - scroll_;
  if (column > 0) out += "\x1b[" + std::to_string(column) + "C";
  writeAll(out);
}

}  // namespace argus::cli
