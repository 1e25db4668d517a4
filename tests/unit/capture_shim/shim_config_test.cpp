// The shim's environment: server, job, rank families in their order, bounds, bad values.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "capture/shim/shim_config.h"
#include "config_env.h"

using namespace argus::capture::shim;

namespace {

ShimConfig read(const std::map<std::string, std::string>& env, std::string* warnings) { return testing::readFromEnv(env, warnings); }

}  // namespace

TEST_CASE("defaults: argusd's default ingest port on loopback, rank 0, 64 MiB") {
  std::string w;
  ShimConfig c = read({}, &w);
  CHECK(w.empty());
  CHECK(c.host == "127.0.0.1");
  CHECK(c.port == 7701);
  CHECK(c.job == "default");
  CHECK(c.topology.rank == 0);
  CHECK(c.max_memory_bytes == size_t{64} << 20);
  CHECK(c.enabled);
  CHECK(!c.topology.host.empty());
}

TEST_CASE("ARGUS_SERVER and ARGUS_JOB; bad values fall back with one warning each") {
  std::string w;
  ShimConfig c = read({{"ARGUS_SERVER", "10.0.0.5:9000"}, {"ARGUS_JOB", "llama-70b.run_2"}}, &w);
  CHECK(w.empty());
  CHECK(c.host == "10.0.0.5");
  CHECK(c.port == 9000);
  CHECK(c.job == "llama-70b.run_2");
  c = read({{"ARGUS_SERVER", "nohost"}, {"ARGUS_JOB", "bad job!"}, {"ARGUS_MAX_MEMORY_MB", "x"}}, &w);
  CHECK(c.port == 7701);
  CHECK(c.job == "default");
  CHECK(c.max_memory_bytes == size_t{64} << 20);
  CHECK(w.find("ARGUS_SERVER=nohost") != std::string::npos);
  CHECK(w.find("ARGUS_JOB=bad job!") != std::string::npos);
  CHECK(w.find("ARGUS_MAX_MEMORY_MB=x") != std::string::npos);
}

TEST_CASE("rank families: torchrun, then Open MPI, then Slurm; the first with a rank decides") {
  std::string w;
  ShimConfig c = read({{"RANK", "5"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_RANK", "3"}, {"SLURM_PROCID", "2"}}, &w);
  CHECK(c.topology.rank == 5);
  CHECK(c.topology.local_rank == 1);
  CHECK(c.topology.world_size == 8);
  c = read({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"SLURM_PROCID", "2"}}, &w);
  CHECK(c.topology.rank == 3);
  CHECK(c.topology.world_size == 4);
  c = read({{"SLURM_PROCID", "17"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "32"}}, &w);
  CHECK(c.topology.rank == 17);
  CHECK(c.topology.local_rank == 1);
  CHECK(c.topology.world_size == 32);
  CHECK(w.empty());
}

TEST_CASE("the memory budget is split in quarters and adds up to at most the bound") {
  ShimBudget b = budgetOf(size_t{64} << 20);
  CHECK(b.sender_bytes == size_t{16} << 20);
  CHECK(b.cupti_pool_bytes == size_t{16} << 20);
  CHECK(b.assembler_events * 64 == size_t{16} << 20);
  CHECK(size_t{b.nvtx_ring_slots} * 32 * kNvtxThreads == size_t{16} << 20);
  std::string w;
  CHECK(!read({{"ARGUS_DISABLE", "1"}}, &w).enabled);
}

TEST_CASE("ARGUS_VERBOSE off and ARGUS_LAUNCH_ATTRIBUTION on by default; 0 is off, anything else on") {
  std::string w;
  CHECK(!read({}, &w).verbose);
  CHECK(read({{"ARGUS_VERBOSE", "1"}}, &w).verbose);
  CHECK(!read({{"ARGUS_VERBOSE", "0"}}, &w).verbose);
  CHECK(read({}, &w).launch_attribution);
  CHECK(!read({{"ARGUS_LAUNCH_ATTRIBUTION", "0"}}, &w).launch_attribution);
  CHECK(read({{"ARGUS_LAUNCH_ATTRIBUTION", "1"}}, &w).launch_attribution);
  CHECK(w.empty());
}
