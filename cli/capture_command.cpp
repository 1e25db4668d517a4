#include "cli/capture_command.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace argus::cli {
namespace {

struct CaptureArgs {
  std::string server;
  std::string job;
  std::string shim;
  bool preload = true;
  std::vector<std::string> command;
};

// Prepends the shim to LD_PRELOAD: preloaded, its CUPTI functions come before libcupti's, so
// that torch.profiler's calls reach the shim, which lends it the Activity API while it traces
// (docs/capture/cupti.md, "Coexisting with torch.profiler"). Not in a sanitizer build: a
// sanitized shim loaded before the program's sanitizer runtime stops the program.
void preloadShim(const std::string& shim) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)shim;
#else
  const char* old = std::getenv("LD_PRELOAD");
  std::string value = old != nullptr && *old != '\0' ? shim + ":" + old : shim;
  ::setenv("LD_PRELOAD", value.c_str(), 1);
#endif
}

// The command's pid, for the signal handlers (0 before the fork).
volatile sig_atomic_t g_child = 0;

void forwardSignal(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

// libargus_capture.so next to the running argus binary.
std::string defaultShimPath() {
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "libargus_capture.so";
  std::string path(self, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "libargus_capture.so";
}

// Absolute, so that a command that changes directory before CUDA or NVTX starts still finds it.
std::string absolutePath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

int runCapture(const CaptureArgs& a) {
  std::string shim = absolutePath(a.shim.empty() ? defaultShimPath() : a.shim);
  if (::access(shim.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "argus capture: capture library %s not found (%s); pass --shim PATH\n", shim.c_str(), std::strerror(errno));
    return 2;
  }
  // Children of the command (torchrun workers, mpirun ranks) inherit these: each rank
  // process loads the shim once, through NVTX's and CUDA's injection hooks and NCCL's
  // profiler plugin lookup (a path: NCCL dlopens it as given).
  ::setenv("NVTX_INJECTION64_PATH", shim.c_str(), 1);
  ::setenv("CUDA_INJECTION64_PATH", shim.c_str(), 1);
  ::setenv("NCCL_PROFILER_PLUGIN", shim.c_str(), 1);
  if (a.preload) preloadShim(shim);
  if (!a.server.empty()) ::setenv("ARGUS_SERVER", a.server.c_str(), 1);
  if (!a.job.empty()) ::setenv("ARGUS_JOB", a.job.c_str(), 1);

  // Forward the signals a person or a scheduler sends to the command; set before the fork
  // so that none arriving in between is lost (g_child is 0 until the fork returns).
  struct sigaction sa = {};
  sa.sa_handler = forwardSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) ::sigaction(sig, &sa, nullptr);

  std::vector<char*> argv;
  for (const auto& s : a.command) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "argus capture: fork: %s\n", std::strerror(errno));
    return 127;
  }
  if (pid == 0) {
    // The command starts with default dispositions (argus ignores SIGPIPE for itself).
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE}) ::signal(sig, SIG_DFL);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "argus capture: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  g_child = pid;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "argus capture: waitpid: %s\n", std::strerror(errno));
      return 127;
    }
  }
  g_child = 0;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

}  // namespace

void addCaptureCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CaptureArgs>();
  CLI::App* sub = app.add_subcommand("capture", "Run a training command with the capture shim injected (argus capture -- CMD ARGS...)");
  sub->add_option("--server", args->server, "argusd ingest address HOST:PORT (default: $ARGUS_SERVER, else 127.0.0.1:7701)");
  sub->add_option("--job", args->job, "job id, 1-128 bytes of [A-Za-z0-9._-] (default: $ARGUS_JOB, else \"default\")");
  sub->add_option("--shim", args->shim, "path of libargus_capture.so (default: next to the argus binary)");
  sub->add_flag("!--no-preload", args->preload, "do not add the shim to LD_PRELOAD (torch.profiler then stops GPU capture for good)");
  sub->add_option("command", args->command, "the command and its arguments, after --")->required();
  sub->callback([args, exit_code] { *exit_code = runCapture(*args); });
}

}  // namespace argus::cli
