// ShimConfig: what the capture shim learns from its environment (docs/capture/shim.md,
// "Environment"). `argus capture` sets ARGUS_SERVER and ARGUS_JOB; the launcher (torchrun,
// mpirun, srun) sets the rank variables; the rest has defaults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "model/step_record.h"

namespace argus::capture::shim {

// argusd's default ingest port (docs/cli/argusd.md, `--ingest`).
inline constexpr uint16_t kDefaultIngestPort = 7701;

struct ShimConfig {
  std::string host = "127.0.0.1";
  uint16_t port = kDefaultIngestPort;
  std::string job = "default";
  std::string auth_token;
  model::RankTopology topology;  // rank, world_size, local_rank, host
  // Memory budget of the shim (ARGUS_MAX_MEMORY_MB, default 64): split between the
  // StepSender's buffer, the assembler's event buffer and the NVTX and CUPTI rings.
  size_t max_memory_bytes = size_t{64} << 20;
  int collect_interval_ms = 50;     // ARGUS_COLLECT_INTERVAL_MS
  int exit_flush_ms = 2000;         // ARGUS_EXIT_FLUSH_MS: how long exit waits for acks
  int stack_hz = 50;                // ARGUS_STACK_HZ: CPU stack samples per second, 0 = off
  // Local spool while argusd is unreachable (docs/wire/spool.md): ARGUS_SPOOL_DIR, else
  // $TMPDIR, else /tmp; at most ARGUS_SPOOL_MAX_MB (default 1024; 0: no spool).
  std::string spool_dir = "/tmp";
  uint64_t spool_max_bytes = uint64_t{1} << 30;
  // ARGUS_SEND_BUFFER_RECORDS: records held in memory until acknowledged (also bounded by
  // the memory budget); the ones beyond go to the spool.
  size_t send_buffer_records = size_t{1} << 16;
  // Flight recorder (docs/capture/shim.md, "Flight recorder"): the raw events of the last
  // flight_recorder_steps steps in a ring of ARGUS_FLIGHT_RECORDER_MB (default 16; 0: off),
  // outside the memory budget above; dumps on argusd's request go to ARGUS_DUMP_DIR
  // (default: the working directory at start, i.e. next to the job).
  size_t flight_recorder_bytes = size_t{16} << 20;
  size_t flight_recorder_steps = 8;  // ARGUS_FLIGHT_RECORDER_STEPS
  std::string dump_dir = ".";
  uint32_t nccl_sample_period = 16; // ARGUS_NCCL_SAMPLE: NCCL proxy events for 1 in N operations (0: never)
  bool enabled = true;              // ARGUS_DISABLE=1 turns the shim into a no-op
  // ARGUS_VERBOSE=1: a line when GPU tracing starts and one with every source's counters at
  // exit (what a person needs to tell why kernels are missing or unattributed).
  bool verbose = false;
  // ARGUS_LAUNCH_ATTRIBUTION=0: no external correlation tags and no launch API records
  // (docs/capture/cupti.md, "Launch attribution"): kernels get phases by GPU time and name.
  bool launch_attribution = true;
};

// The memory budget's split (docs/capture/shim.md, "Bounds").
struct ShimBudget {
  size_t sender_bytes;       // StepSender::max_buffered_bytes
  size_t assembler_events;   // StepAssemblerOptions::max_buffered_events (64 B each)
  uint32_t nvtx_ring_slots;  // per recording thread (32 B each), sized for kNvtxThreads
  size_t cupti_pool_bytes;   // CuptiSource's buffer pool
};
inline constexpr size_t kNvtxThreads = 32;  // recording threads the NVTX quarter is sized for
ShimBudget budgetOf(size_t max_memory_bytes);

// Reads the configuration through `get` (getenv's contract: nullptr when unset). Malformed
// values fall back to the default and append one line to *warnings (the caller logs them).
// Rank variables, first found wins: RANK/LOCAL_RANK/WORLD_SIZE, then
// OMPI_COMM_WORLD_RANK/_LOCAL_RANK/_SIZE, then SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS.
using EnvFn = std::function<const char*(const char*)>;
ShimConfig readShimConfig(const EnvFn& get, std::string* warnings);

}  // namespace argus::capture::shim
