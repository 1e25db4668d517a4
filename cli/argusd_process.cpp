// ArgusdProcess (see argusd_process.h).
#include "cli/argusd_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace argus::cli {

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Finds "argusd: <what> listening on HOST:PORT" in `text`; 0 when absent.
uint16_t listeningPort(const std::string& text, const std::string& what) {
  std::string needle = "argusd: " + what + " listening on ";
  size_t at = text.find(needle);
  if (at == std::string::npos) return 0;
  size_t eol = text.find('\n', at);
  if (eol == std::string::npos) return 0;  // line not complete yet
  std::string line = text.substr(at + needle.size(), eol - at - needle.size());
  size_t colon = line.rfind(':');
  if (colon == std::string::npos) return 0;
  return static_cast<uint16_t>(std::atoi(line.c_str() + colon + 1));
}

}  // namespace

std::string argusdBinary() {
  const char* bin = std::getenv("ARGUSD_BIN");
  return bin != nullptr && *bin != '\0' ? bin : "argusd";
}

std::string makeTempDir(const std::string& prefix, const std::string& parent) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string under = !parent.empty() ? parent : tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  std::string pattern = under + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) return "";
  return buf.data();
}

void removeTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

ArgusdProcess::ArgusdProcess(std::string work_dir) : work_dir_(std::move(work_dir)) {
  if (work_dir_.empty()) {
    work_dir_ = makeTempDir("argusd");
    own_dir_ = true;
  }
}

ArgusdProcess::~ArgusdProcess() {
  if (pid_ > 0) kill();
  if (own_dir_ && std::getenv("ARGUS_KEEP_TEST_DIRS") == nullptr) removeTree(work_dir_);
}

Status ArgusdProcess::start(std::chrono::milliseconds timeout) {
  if (pid_ > 0) return Status::invalidArgument("argusd is already running");
  ++starts_;
  std::string out_path = work_dir_ + "/stdout.log";
  std::string err_path = work_dir_ + "/stderr.log";
  std::vector<std::string> argv = {argusdBinary(), "--data", dataDir(), "--ingest",
                                   "127.0.0.1:" + std::to_string(requested_port_)};
  if (http_) {
    argv.push_back("--http");
    argv.push_back("127.0.0.1:0");
  }
  argv.insert(argv.end(), args_.begin(), args_.end());
  // Truncate stdout so we parse this run's lines; stderr accumulates over restarts.
  int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0) {
    if (out_fd >= 0) ::close(out_fd);
    if (err_fd >= 0) ::close(err_fd);
    return Status::ioError("cannot create logs in " + work_dir_);
  }
  // posix_spawn, not fork: the caller is usually a test with threads of its own, and a
  // forked child that allocates before its exec can block forever on an allocator lock some
  // other thread held at the fork (it did, under ASan: a restart that never printed a line).
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  ::posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(out_fd);
  ::close(err_fd);
  if (spawned != 0) return Status::ioError("cannot run " + argv[0] + ": " + std::strerror(spawned));
  pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::string text = readFile(out_path);
    uint16_t ingest = listeningPort(text, "ingest");
    uint16_t http = http_ ? listeningPort(text, "http") : 0;
    if (ingest != 0 && (!http_ || http != 0)) {
      ingest_port_ = ingest;
      http_port_ = http;
      return Status::ok();
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::unavailable("argusd exited during startup (status " + std::to_string(status) + "): " + stderrTail());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill();
  return Status::unavailable("argusd printed no listening line in time: " + stderrTail());
}

int ArgusdProcess::waitExit(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (r < 0) {
      pid_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -2;
}

int ArgusdProcess::stop(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int rc = waitExit(timeout);
  if (rc == -2) {
    kill();
    return -1;
  }
  return rc;
}

void ArgusdProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string ArgusdProcess::stderrTail(size_t bytes) const {
  std::string text = readFile(work_dir_ + "/stderr.log");
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

}  // namespace argus::cli
