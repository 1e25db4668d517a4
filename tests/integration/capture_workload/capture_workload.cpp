// A small multi-process CPU "training job" annotated with NVTX the way PyTorch and Megatron
// annotate theirs, for the capture shim's tests and bench/capture_overhead.
//
//   capture_workload --ranks N --steps S [--work U] [--slow-rank R] [--slow-factor F]
//                    [--sleep-work] [--out DIR] [--exit-code C] [--pause-ms P] [--hang]
//
// Without RANK in the environment it is the launcher (torchrun's role): it opens the
// allreduce listener, forks N rank processes that exec this program with RANK, LOCAL_RANK,
// WORLD_SIZE set, waits for them and exits with the first failing rank's code, else C.
// A rank runs S steps: `ProfilerStep#i` around `forward`, `backward`, an `nccl:AllReduce`
// range around a star allreduce over loopback TCP (rank 0 sums), and `optimizer`. Rank R
// does F times the forward/backward work. With --out each rank writes
// DIR/rank-<r>.txt: "step <i> <fwd_ns> <bwd_ns> <allreduce_ns> <iter_ns>" per step.
// --sleep-work: a unit of work is a 250 us sleep instead of a matrix product, as a GPU job's
// CPU thread waits on its device: range lengths then do not depend on how many cores the
// ranks share (tests comparing ranks' wall times on a loaded 2-core machine).
// --pause-ms: each rank sleeps P ms between steps (a run that lasts, at little CPU: fault tests).
// --hang: after the steps, sleep until killed (signal tests).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr int kFloats = 4096;  // allreduce payload: 16 KiB per rank

struct Args {
  int ranks = 4, steps = 20, work = 20, slow_rank = -1, slow_factor = 3, exit_code = 0, pause_ms = 0;
  bool hang = false, sleep_work = false;
  std::string out;
};

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// `units` x a 48x48 matrix product: real floating-point work, the same cost every time.
float compute(int units, std::vector<float>& a, std::vector<float>& b, std::vector<float>& c) {
  constexpr int n = 48;
  for (int u = 0; u < units; ++u) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        float s = 0;
        for (int k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
        c[i * n + j] = s * 0.5f;
      }
    std::swap(a, c);
  }
  return a[0];
}

constexpr int64_t kSleepUnitNs = 250'000;

// Sleeps until `units` x kSleepUnitNs past the start (an absolute deadline: no drift from
// early wake-ups or signals).
void sleepWork(int units) {
  timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  int64_t ns = until.tv_nsec + units * kSleepUnitNs;
  until.tv_sec += ns / 1'000'000'000, until.tv_nsec = ns % 1'000'000'000;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) != 0) {
  }
}

bool sendAll(int fd, const void* p, size_t n) {
  const char* q = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::send(fd, q, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    q += w, n -= static_cast<size_t>(w);
  }
  return true;
}
bool recvAll(int fd, void* p, size_t n) {
  char* q = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::recv(fd, q, n, 0);
    if (r <= 0) return false;
    q += r, n -= static_cast<size_t>(r);
  }
  return true;
}

int runRank(const Args& a, int rank) {
  int world = a.ranks;
  int port = std::atoi(std::getenv("WORKLOAD_PORT"));
  std::vector<int> peers;  // rank 0: fds of ranks 1..world-1 in rank order; others: the root
  if (rank == 0) {
    int lfd = std::atoi(std::getenv("WORKLOAD_LISTEN_FD"));
    peers.assign(world - 1, -1);
    for (int i = 1; i < world; ++i) {
      int fd = ::accept(lfd, nullptr, nullptr);
      int r = 0;
      if (fd < 0 || !recvAll(fd, &r, sizeof r) || r < 1 || r >= world) return 3;
      peers[r - 1] = fd;
    }
  } else {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return 3;
    if (!sendAll(fd, &rank, sizeof rank)) return 3;
    peers.push_back(fd);
  }
  for (int fd : peers) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }

  std::vector<float> ma(48 * 48, 1.0f), mb(48 * 48, 0.999f), mc(48 * 48);
  std::vector<float> grad(kFloats, 1.0f), peer(kFloats);
  int factor = rank == a.slow_rank ? a.slow_factor : 1;
  FILE* out = nullptr;
  if (!a.out.empty()) out = std::fopen((a.out + "/rank-" + std::to_string(rank) + ".txt").c_str(), "w");
  float sink = 0;
  auto work = [&](int units) {
    if (!a.sleep_work) return compute(units, ma, mb, mc);
    sleepWork(units);
    return 0.0f;
  };
  nvtxNameOsThreadA(static_cast<uint32_t>(::gettid()), "train");
  for (int step = 0; step < a.steps; ++step) {
    std::string marker = "ProfilerStep#" + std::to_string(step);
    int64_t t0 = nowNs();
    nvtxRangePushA(marker.c_str());
    nvtxRangePushA("forward");
    sink += work(a.work * factor);
    nvtxRangePop();
    int64_t t1 = nowNs();
    nvtxRangePushA("backward");
    sink += work(2 * a.work * factor);
    nvtxRangePop();
    int64_t t2 = nowNs();
    // The collective: the fast ranks wait here for the slow one.
    nvtxRangePushA("nccl:AllReduce");
    for (float& g : grad) g = sink * 1e-9f + 1.0f;
    if (rank == 0) {
      for (int fd : peers) {
        if (!recvAll(fd, peer.data(), kFloats * sizeof(float))) return 4;
        for (int i = 0; i < kFloats; ++i) grad[i] += peer[i];
      }
      for (int fd : peers)
        if (!sendAll(fd, grad.data(), kFloats * sizeof(float))) return 4;
    } else {
      if (!sendAll(peers[0], grad.data(), kFloats * sizeof(float)) || !recvAll(peers[0], grad.data(), kFloats * sizeof(float))) return 4;
    }
    nvtxRangePop();
    int64_t t3 = nowNs();
    nvtxRangePushA("optimizer");
    sink += work(a.work / 4 + 1) + grad[0] * 1e-9f;
    nvtxRangePop();
    nvtxRangePop();
    int64_t t4 = nowNs();
    if (out) std::fprintf(out, "step %d %lld %lld %lld %lld\n", step, (long long)(t1 - t0), (long long)(t2 - t1), (long long)(t3 - t2), (long long)(t4 - t0));
    if (a.pause_ms > 0) ::usleep(static_cast<useconds_t>(a.pause_ms) * 1000);
  }
  if (out) std::fclose(out);
  if (sink == 12345.0f) std::puts("");  // keep the work observable
  while (a.hang) ::pause();
  return a.exit_code;
}

int launch(const Args& a, char** argv) {
  int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(lfd, 64) != 0 ||
      ::getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("capture_workload: listen");
    return 3;
  }
  std::vector<pid_t> pids;
  const std::string world = std::to_string(a.ranks), port = std::to_string(ntohs(addr.sin_port)), listen_fd = std::to_string(lfd);
  for (int r = 0; r < a.ranks; ++r) {
    // The rank's environment is built before the fork: under argus capture the launcher
    // runs the shim's threads, and a fork child must not allocate or take a lock (setenv's)
    // that one of them may have held at the fork.
    const std::string rs = std::to_string(r);
    std::vector<std::string> vars = {"RANK=" + rs, "LOCAL_RANK=" + rs, "WORLD_SIZE=" + world, "WORKLOAD_PORT=" + port,
                                     "WORKLOAD_LISTEN_FD=" + listen_fd};
    std::vector<char*> envp;
    for (std::string& v : vars) envp.push_back(v.data());
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view entry(*e);
      const size_t eq = entry.find('=');
      bool replaced = false;  // an entry without '=' names no variable: passed on as it is
      for (const std::string& v : vars) replaced = replaced || (eq != entry.npos && v.starts_with(entry.substr(0, eq + 1)));
      if (!replaced) envp.push_back(*e);
    }
    envp.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execve("/proc/self/exe", argv, envp.data());
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  ::close(lfd);
  int code = 0;
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    int c = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (c != a.exit_code && code == 0) code = c;
  }
  return code != 0 ? code : a.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--hang") { a.hang = true; continue; }
    if (k == "--sleep-work") { a.sleep_work = true; continue; }
    if (i + 1 == argc) { std::fprintf(stderr, "capture_workload: %s needs a value\n", k.c_str()); return 2; }
    const char* v = argv[++i];
    if (k == "--ranks") a.ranks = std::atoi(v);
    else if (k == "--steps") a.steps = std::atoi(v);
    else if (k == "--work") a.work = std::atoi(v);
    else if (k == "--slow-rank") a.slow_rank = std::atoi(v);
    else if (k == "--slow-factor") a.slow_factor = std::atoi(v);
    else if (k == "--out") a.out = v;
    else if (k == "--exit-code") a.exit_code = std::atoi(v);
    else if (k == "--pause-ms") a.pause_ms = std::atoi(v);
    else { std::fprintf(stderr, "capture_workload: unknown option %s\n", k.c_str()); return 2; }
  }
  const char* rank = std::getenv("RANK");
  if (rank != nullptr) return runRank(a, std::atoi(rank));
  return launch(a, argv);
}
