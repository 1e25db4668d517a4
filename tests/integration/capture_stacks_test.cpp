// The stack sampler end to end: a pure-Python job (capture_stacks/burn.py) whose steps are
// NVTX `ProfilerStep#N` ranges spends 75% of each step's wall time in burn_a and 25% in
// burn_b; run under `argus capture` into a real argusd, the stored stacks must name both
// functions (frame text "burn_a (<file>:<line>)" under train_step, a native leaf first) with
// sample shares within 15 points of 75/25, in every step. Skipped, with a message, where
// there is no python3.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli/argusd_process.h"
#include "ingest_test_util.h"
#include "model/step_record.h"
#include "storage/keys.h"
#include "storage/meta_records.h"
#include "storage/rocks_store.h"

using namespace argus;
using argus::testing::RunResult;
using argus::testing::runArgus;

#ifdef ARGUS_STACKS_WORKLOAD
namespace {

std::string python3() {
  FILE* p = ::popen("command -v python3", "r");
  if (p == nullptr) return "";
  char buf[512] = {};
  std::string out = std::fgets(buf, sizeof buf, p) != nullptr ? buf : "";
  ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// "name (file:line)" for `def name(` in the workload: what the sampler must report.
std::string frameOf(const std::string& name) {
  std::ifstream in(ARGUS_STACKS_WORKLOAD);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.rfind("def " + name + "(", 0) == 0) return name + " (" + ARGUS_STACKS_WORKLOAD + ":" + std::to_string(n) + ")";
  }
  return "";
}

struct StoredStacks {
  std::map<uint64_t, std::vector<std::string>> dictionary;  // stack id -> frames, leaf first
  std::map<uint64_t, std::map<uint64_t, uint64_t>> steps;   // step -> stack id -> samples
};

Status readStacks(const std::string& data_dir, const std::string& job, StoredStacks* out) {
  storage::StoreOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  auto store = storage::RocksStore::openRocks(data_dir, options);
  if (!store.isOk()) return store.status();
  Status decode = Status::ok();
  ARGUS_RETURN_IF_ERROR((*store)->forEachRaw("meta", [&](std::string_view key, std::string_view value) {
    // The id is in the key (docs/format/keys.md): "meta job=J stack id=<16 hex digits>".
    const std::string described = storage::describeKey("meta", key);
    const size_t at = described.find(" stack id=");
    if (at == std::string::npos) return true;
    model::StackDictEntry e;
    decode = storage::decodeStackDict(value, &e);
    if (!decode.isOk()) return false;
    out->dictionary[std::stoull(described.substr(at + 10), nullptr, 16)] = e.frames;
    return true;
  }));
  ARGUS_RETURN_IF_ERROR(decode);
  storage::ScanSpec spec;
  spec.job = job;
  spec.table = storage::Table::kStacks;
  spec.columns = {"step", "stack_id", "samples"};
  auto cursor = (*store)->scan(spec);
  if (!cursor.isOk()) return cursor.status();
  storage::ColumnBatch batch;
  for (;;) {
    bool has_rows = false;
    ARGUS_RETURN_IF_ERROR(cursor.value()->next(&batch, &has_rows));
    if (!has_rows) break;
    const storage::Column *step = nullptr, *stack = nullptr, *samples = nullptr;
    for (const auto& c : batch.columns) {
      if (c.name == "step") step = &c;
      if (c.name == "stack_id") stack = &c;
      if (c.name == "samples") samples = &c;
    }
    if (!step || !stack || !samples) return Status::corruption("stacks scan lacks a column");
    for (size_t i = 0; i < batch.rows; ++i) {
      out->steps[static_cast<uint64_t>(step->ints[i])][static_cast<uint64_t>(stack->ints[i])] += static_cast<uint64_t>(samples->ints[i]);
    }
  }
  return Status::ok();
}

}  // namespace

TEST_CASE("argus capture: a Python job's stored stacks name its functions with their shares of the time") {
  const std::string python = python3();
  if (python.empty()) {
    MESSAGE("python3 not found on PATH: the stack sampler's end-to-end test is skipped");
    return;
  }
  const std::string burn_a = frameOf("burn_a"), burn_b = frameOf("burn_b"), train_step = frameOf("train_step");
  REQUIRE(!burn_a.empty());
  REQUIRE(!train_step.empty());

  cli::ArgusdProcess argusd;
  Status s = argusd.start();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  constexpr int kSteps = 8;
  constexpr double kStepS = 0.4, kShareA = 0.75;
  RunResult r = runArgus("capture --server 127.0.0.1:" + std::to_string(argusd.ingestPort()) + " --job stackjob -- " +
                         ARGUS_STACKS_PRELOAD + " " + python + " " + ARGUS_STACKS_WORKLOAD + " " + ARGUS_NVTX_CTYPES + " " +
                         std::to_string(kSteps) + " " + std::to_string(kStepS) + " " + std::to_string(kShareA));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("argus:") == std::string::npos);  // the shim had nothing to complain about
  REQUIRE(argusd.stop() == 0);

  StoredStacks stored;
  s = readStacks(argusd.dataDir(), "stackjob", &stored);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  REQUIRE(stored.steps.size() == kSteps);
  uint64_t total_a = 0, total_b = 0, total = 0;
  for (const auto& [step, stacks] : stored.steps) {
    uint64_t a = 0, b = 0, n = 0;
    for (const auto& [id, samples] : stacks) {
      auto it = stored.dictionary.find(id);
      REQUIRE_MESSAGE(it != stored.dictionary.end(), "stack " << id << " of step " << step << " has no dictionary entry");
      const std::vector<std::string>& frames = it->second;
      REQUIRE(frames.size() >= 2);
      CHECK((frames[0].front() == '[' && frames[0].back() == ']'));  // the native leaf
      n += samples;
      // burn_a / burn_b are the innermost Python frame, called from train_step.
      if (frames.size() >= 3 && frames[1] == burn_a) {
        CHECK(frames[2] == train_step);
        a += samples;
      } else if (frames.size() >= 3 && frames[1] == burn_b) {
        CHECK(frames[2] == train_step);
        b += samples;
      }
    }
    MESSAGE("step " << step << ": " << n << " samples, burn_a " << a << ", burn_b " << b);
    // 50 Hz over a 0.4 s step: ~20 samples; a loaded machine delays some ticks.
    CHECK(n >= 8);
    total_a += a, total_b += b, total += n;
  }
  REQUIRE(total_a + total_b > 0);
  const double share_a = static_cast<double>(total_a) / static_cast<double>(total_a + total_b);
  MESSAGE("burn_a share " << share_a << " of " << total_a + total_b << " burn samples (" << total << " in all)");
  CHECK(share_a > kShareA - 0.15);
  CHECK(share_a < kShareA + 0.15);
  // Nearly every sample is in one of the two (the rest: the loop's own lines, NVTX calls).
  CHECK(total_a + total_b >= total * 8 / 10);
}
#endif  // ARGUS_STACKS_WORKLOAD
