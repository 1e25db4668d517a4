#include "cli/verify_command.h"

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "storage/rocks_store.h"
#include "storage/store_verifier.h"

namespace argus::cli {

namespace {

struct VerifyOptions {
  std::string data_dir;
  uint64_t max_problems = 100;  // printed; all are counted
};

int verify(const VerifyOptions& o) {
  Result<std::unique_ptr<storage::RocksStore>> store = storage::RocksStore::openReadOnly(o.data_dir);
  if (!store.isOk()) {
    std::fprintf(stderr, "argus verify: cannot open %s: %s\n", o.data_dir.c_str(), store.status().toString().c_str());
    return 1;
  }
  uint64_t shown = 0;
  Result<storage::VerifyCounts> counts = storage::verifyStore(**store, [&](const std::string& problem) {
    if (o.max_problems == 0 || shown < o.max_problems) std::printf("PROBLEM %s\n", problem.c_str());
    ++shown;
  });
  if (!counts.isOk()) {
    std::fprintf(stderr, "argus verify: %s: %s\n", o.data_dir.c_str(), counts.status().toString().c_str());
    return 1;
  }
  const storage::VerifyCounts& c = *counts;
  if (o.max_problems != 0 && c.problems > o.max_problems) std::printf("(%" PRIu64 " more problems not shown)\n", c.problems - o.max_problems);
  std::printf("%s: %" PRIu64 " jobs, %" PRIu64 " head entries (%" PRIu64 " records, %" PRIu64 " orphaned), %" PRIu64 " chunks in %" PRIu64
              " chunk sets (%" PRIu64 " bytes): %s\n",
              o.data_dir.c_str(), c.jobs, c.head_entries, c.head_records, c.head_orphaned, c.chunks, c.chunk_sets, c.chunk_bytes,
              c.problems == 0 ? "no problems" : (std::to_string(c.problems) + " problems").c_str());
  if (c.problems > 0) std::fprintf(stderr, "argus verify: %s: %" PRIu64 " problems\n", o.data_dir.c_str(), c.problems);
  return c.problems == 0 ? 0 : 1;
}

}  // namespace

void addVerifyCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<VerifyOptions>();
  CLI::App* cmd = app.add_subcommand("verify", "Check every entry of a data directory: checksums, complete chunk sets, decodable records");
  cmd->add_option("--data", options->data_dir, "argusd data directory")->required();
  cmd->add_option("--max-problems", options->max_problems, "most problems printed (0: all); all are counted")->capture_default_str();
  cmd->callback([options, exit_code] { *exit_code = verify(*options); });
}

}  // namespace argus::cli
