#include "capture/shim/shim_config.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <string_view>

namespace argus::capture::shim {
namespace {

bool parseUint(std::string_view text, uint64_t max, uint64_t* out) {
  if (text.empty()) return false;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v > max) return false;
  *out = v;
  return true;
}

bool validJob(std::string_view job) {
  if (job.empty() || job.size() > 128) return false;
  return std::all_of(job.begin(), job.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

}  // namespace

ShimBudget budgetOf(size_t max_memory_bytes) {
  // Quarters: the sender's unacknowledged records, the assembler's buffered events, the
  // NVTX rings (kNvtxThreads threads), the CUPTI buffer pool.
  size_t quarter = std::max<size_t>(max_memory_bytes / 4, size_t{1} << 20);
  ShimBudget b;
  b.sender_bytes = quarter;
  b.assembler_events = std::max<size_t>(quarter / 64, 4096);
  b.nvtx_ring_slots = static_cast<uint32_t>(std::clamp<size_t>(quarter / kNvtxThreads / 32, 64, 1u << 20));
  b.cupti_pool_bytes = quarter;
  return b;
}

ShimConfig readShimConfig(const EnvFn& get, std::string* warnings) {
  ShimConfig c;
  auto warn = [&](const std::string& line) { warnings->append(line).append("\n"); };
  auto value = [&](const char* name) -> const char* {
    const char* v = get(name);
    return (v != nullptr && *v != '\0') ? v : nullptr;
  };
  if (const char* v = value("ARGUS_DISABLE")) c.enabled = std::string_view(v) == "0";
  if (const char* v = value("ARGUS_VERBOSE")) c.verbose = std::string_view(v) != "0";
  if (const char* v = value("ARGUS_LAUNCH_ATTRIBUTION")) c.launch_attribution = std::string_view(v) != "0";
  if (const char* v = value("ARGUS_SERVER")) {
    std::string_view s(v);
    size_t colon = s.rfind(':');
    uint64_t port = 0;
    if (colon == std::string_view::npos || colon == 0 || !parseUint(s.substr(colon + 1), 65535, &port) || port == 0) {
      warn("ARGUS_SERVER=" + std::string(s) + " is not HOST:PORT; using " + c.host + ":" + std::to_string(c.port));
    } else {
      c.host = std::string(s.substr(0, colon));
      c.port = static_cast<uint16_t>(port);
    }
  }
  if (const char* v = value("ARGUS_JOB")) {
    if (validJob(v)) c.job = v;
    else warn(std::string("ARGUS_JOB=") + v + " is not 1-128 bytes of [A-Za-z0-9._-]; using job " + c.job);
  }
  if (const char* v = value("ARGUS_TOKEN")) c.auth_token = v;
  if (const char* v = value("ARGUS_MAX_MEMORY_MB")) {
    uint64_t mb = 0;
    if (parseUint(v, 1 << 20, &mb) && mb >= 4) c.max_memory_bytes = size_t{mb} << 20;
    else warn(std::string("ARGUS_MAX_MEMORY_MB=") + v + " is not a number >= 4; using 64");
  }
  if (const char* v = value("ARGUS_COLLECT_INTERVAL_MS")) {
    uint64_t ms = 0;
    if (parseUint(v, 10'000, &ms) && ms >= 1) c.collect_interval_ms = static_cast<int>(ms);
    else warn(std::string("ARGUS_COLLECT_INTERVAL_MS=") + v + " is not 1-10000; using 50");
  }
  if (const char* v = value("ARGUS_NCCL_SAMPLE")) {
    uint64_t n = 0;
    if (parseUint(v, 1 << 16, &n)) c.nccl_sample_period = static_cast<uint32_t>(n);
    else warn(std::string("ARGUS_NCCL_SAMPLE=") + v + " is not 0-65536; using 16");
  }
  if (const char* v = value("ARGUS_SPOOL_DIR")) c.spool_dir = v;
  else if (const char* t = value("TMPDIR")) c.spool_dir = t;
  if (const char* v = value("ARGUS_SPOOL_MAX_MB")) {
    uint64_t mb = 0;
    if (parseUint(v, 1 << 24, &mb)) c.spool_max_bytes = mb << 20;
    else warn(std::string("ARGUS_SPOOL_MAX_MB=") + v + " is not 0-16777216; using 1024");
  }
  if (const char* v = value("ARGUS_SEND_BUFFER_RECORDS")) {
    uint64_t n = 0;
    if (parseUint(v, 1 << 24, &n) && n >= 1) c.send_buffer_records = n;
    else warn(std::string("ARGUS_SEND_BUFFER_RECORDS=") + v + " is not 1-16777216; using 65536");
  }
  if (const char* v = value("ARGUS_EXIT_FLUSH_MS")) {
    uint64_t ms = 0;
    if (parseUint(v, 600'000, &ms)) c.exit_flush_ms = static_cast<int>(ms);
    else warn(std::string("ARGUS_EXIT_FLUSH_MS=") + v + " is not 0-600000; using 2000");
  }
  if (const char* v = value("ARGUS_STACK_HZ")) {
    uint64_t hz = 0;
    if (parseUint(v, 1000, &hz)) c.stack_hz = static_cast<int>(hz);
    else warn(std::string("ARGUS_STACK_HZ=") + v + " is not 0-1000; using 50");
  }
  if (const char* v = value("ARGUS_FLIGHT_RECORDER_MB")) {
    uint64_t mb = 0;
    if (parseUint(v, 1 << 16, &mb)) c.flight_recorder_bytes = size_t{mb} << 20;
    else warn(std::string("ARGUS_FLIGHT_RECORDER_MB=") + v + " is not 0-65536; using 16");
  }
  if (const char* v = value("ARGUS_FLIGHT_RECORDER_STEPS")) {
    uint64_t n = 0;
    if (parseUint(v, 1 << 16, &n) && n >= 1) c.flight_recorder_steps = n;
    else warn(std::string("ARGUS_FLIGHT_RECORDER_STEPS=") + v + " is not 1-65536; using 8");
  }
  if (const char* v = value("ARGUS_DUMP_DIR")) {
    c.dump_dir = v;
  } else {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) != nullptr) c.dump_dir = cwd;
  }

  // The first family whose rank variable is set decides rank, local rank and world size.
  struct Family {
    const char *rank, *local, *size;
  };
  static constexpr Family kFamilies[] = {{"RANK", "LOCAL_RANK", "WORLD_SIZE"},
                                         {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
                                         {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"}};
  for (const Family& f : kFamilies) {
    const char* rank = value(f.rank);
    if (rank == nullptr) continue;
    auto read = [&](const char* name, uint32_t* out) {
      const char* v = value(name);
      if (v == nullptr) return;
      uint64_t n = 0;
      if (parseUint(v, UINT32_MAX, &n)) *out = static_cast<uint32_t>(n);
      else warn(std::string(name) + "=" + v + " is not a number; ignored");
    };
    read(f.rank, &c.topology.rank);
    read(f.local, &c.topology.local_rank);
    read(f.size, &c.topology.world_size);
    break;
  }
  c.topology.device = c.topology.local_rank;  // one GPU per local rank, the launchers' habit
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) c.topology.host = host;
  return c;
}

}  // namespace argus::capture::shim
