// argus shell on a terminal: keystrokes typed into a pseudo-terminal (forkpty) edit the line,
// recall history (a multi-line statement as one entry), abandon input with Ctrl-C and leave
// with Ctrl-D, cancel a running statement with Ctrl-C; the terminal is back in cooked mode
// after exit and after a fatal signal.
#include <doctest/doctest.h>

#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/argusd_process.h"
#include "storage/store.h"
#include "tests/unit/storage/store_test_util.h"

using namespace argus;

namespace {

const std::string kLeft = "\x1b[D", kUp = "\x1b[A";

// A shell on the slave side of a pseudo-terminal; the test holds the master.
class PtyShell {
 public:
  PtyShell(const std::string& data_dir, const std::string& history_path) {
    const char* bin = std::getenv("ARGUS_BIN");
    REQUIRE_MESSAGE(bin != nullptr, "ARGUS_BIN is not set (run under ctest)");
    winsize ws{};
    ws.ws_row = 24;
    ws.ws_col = 100;
    pid_ = ::forkpty(&master_, nullptr, nullptr, &ws);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::setenv("ARGUS_HISTORY", history_path.c_str(), 1);
      ::execl(bin, bin, "shell", "--data", data_dir.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~PtyShell() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(master_);
  }

  void type(const std::string& keys) { REQUIRE(::write(master_, keys.data(), keys.size()) == static_cast<ssize_t>(keys.size())); }

  // Reads until `needle` appears after what earlier expects consumed; false after 20 s.
  bool expect(const std::string& needle) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      if (size_t at = output_.find(needle, consumed_); at != std::string::npos) {
        consumed_ = at + needle.size();
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0 || !readSome(static_cast<int>(left))) return false;
    }
  }

  // Waits for the shell to exit; its exit code, or 128 + signal.
  int wait() {
    while (readSome(200)) {
    }
    int status = 0;
    REQUIRE(::waitpid(pid_, &status, 0) == pid_);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // The terminal's line discipline flags (master and slave share them).
  tcflag_t localFlags() const {
    termios t{};
    REQUIRE(::tcgetattr(master_, &t) == 0);
    return t.c_lflag;
  }

  const std::string& output() const { return output_; }
  pid_t pid() const { return pid_; }

 private:
  bool readSome(int timeout_ms) {
    pollfd p{master_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char buf[4096];
    ssize_t n = ::read(master_, buf, sizeof buf);
    if (n <= 0) return false;  // EIO: the shell is gone
    output_.append(buf, static_cast<size_t>(n));
    return true;
  }

  int master_ = -1;
  pid_t pid_ = -1;
  std::string output_;
  size_t consumed_ = 0;
};

struct EmptyStore {
  EmptyStore() : dir(cli::makeTempDir("argus-shell-pty")) {
    auto store = storage::Store::open(dir + "/data", storage::StoreOptions{});
    REQUIRE(store.isOk());
  }
  ~EmptyStore() { cli::removeTree(dir); }
  std::string dir;
};

}  // namespace

TEST_CASE("keys edit, recall and abandon lines in the real shell") {
  EmptyStore store;
  const std::string history = store.dir + "/history";
  PtyShell shell(store.dir + "/data", history);
  REQUIRE(shell.expect("argus> "));
  CHECK((shell.localFlags() & ICANON) == 0);  // raw while a line is read

  // Left arrows, then a digit inserted in the middle.
  shell.type("SELECT 12 AS x;" + kLeft + kLeft + kLeft + kLeft + kLeft + kLeft + kLeft + "3\r");
  CHECK(shell.expect("132\r\n(1 row)"));
  REQUIRE(shell.expect("argus> "));

  // Ctrl-C abandons the line, not the shell.
  shell.type("SELECT 'dropped';\x03");
  CHECK(shell.expect("^C"));
  REQUIRE(shell.expect("argus> "));

  // A statement over two lines: the continuation prompt, then the result.
  shell.type("SELECT 7\r");
  REQUIRE(shell.expect("..> "));
  shell.type(" AS seven;\r");
  CHECK(shell.expect("7\r\n(1 row)"));
  REQUIRE(shell.expect("argus> "));

  // Up twice reaches the first statement; backspace and typing change it.
  shell.type(kUp + kUp + "\x7f\x7f\x7f\x7f\x7f\x7f" + "0 AS y;\r");
  CHECK(shell.expect("1320\r\n(1 row)"));
  REQUIRE(shell.expect("argus> "));

  // Up twice: the two-line statement comes back whole and runs again.
  shell.type(kUp + kUp + "\r");
  CHECK(shell.expect("seven\r\n  -----\r\n      7\r\n(1 row)"));
  REQUIRE(shell.expect("argus> "));

  // Ctrl-C on a continuation line drops the whole unfinished statement.
  shell.type("SELECT 8\r");
  REQUIRE(shell.expect("..> "));
  shell.type("\x03");
  REQUIRE(shell.expect("argus> "));
  shell.type("SELECT 9 AS nine;\r");
  CHECK(shell.expect("nine\r\n  ----\r\n     9\r\n(1 row)"));
  REQUIRE(shell.expect("argus> "));

  shell.type("\x04");  // Ctrl-D on an empty line
  CHECK(shell.wait() == 0);
  INFO(shell.output());
  CHECK(shell.output().find("dropped\r\n(1 row)") == std::string::npos);
  CHECK((shell.localFlags() & (ICANON | ECHO)) == (ICANON | ECHO));

  std::ifstream in(history);
  std::string text(std::istreambuf_iterator<char>(in), {});
  CHECK(text == "SELECT 132 AS x;\nSELECT 7\\n AS seven;\nSELECT 1320 AS y;\nSELECT 7\\n AS seven;\nSELECT 9 AS nine;\n");
}

TEST_CASE("Ctrl-C cancels the running statement, not the shell") {
  EmptyStore store;
  {
    auto opened = storage::Store::open(store.dir + "/data", storage::StoreOptions{});
    REQUIRE(opened.isOk());
    auto job = (*opened)->ensureJob("j");
    REQUIRE(job.isOk());
    std::vector<model::StepRecord> records(200);
    for (uint64_t step = 0; step < records.size(); ++step) {
      records[step].step = step;
      records[step].iter_ns = 1000;
    }
    REQUIRE(storage::testutil::writeRecords(**opened, *job, records).isOk());
  }
  PtyShell shell(store.dir + "/data", store.dir + "/history");
  REQUIRE(shell.expect("argus> "));
  // 200^4 = 1.6 billion rows: minutes of work, well inside the 30 s deadline's reach only
  // if nothing cancels it.
  auto started = std::chrono::steady_clock::now();
  shell.type("SELECT count(*) FROM steps a, steps b, steps c, steps d;\r");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  shell.type("\x03");
  CHECK(shell.expect("query cancelled on request"));
  REQUIRE(shell.expect("argus> "));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(15));
  shell.type("SELECT count(*) AS n FROM steps;\r");
  CHECK(shell.expect("200\r\n(1 row)"));
  REQUIRE(shell.expect("argus> "));
  shell.type("\x04");
  CHECK(shell.wait() == 0);
}

TEST_CASE("a signal while the shell reads a line restores the terminal") {
  EmptyStore store;
  PtyShell shell(store.dir + "/data", store.dir + "/history");
  REQUIRE(shell.expect("argus> "));
  shell.type("SELECT");
  REQUIRE(shell.expect("SELECT"));
  CHECK((shell.localFlags() & ICANON) == 0);
  ::kill(shell.pid(), SIGTERM);
  CHECK(shell.wait() == 128 + SIGTERM);
  CHECK((shell.localFlags() & (ICANON | ECHO)) == (ICANON | ECHO));
}
