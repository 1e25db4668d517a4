// `argus import chrome` on generated Megatron-style pipelines: every record field of every
// (rank, step) against values computed from the generator's own truth (which op is
// forward, backward, optimizer, communication, data or a timer around others; see
// expectedRecords in megatron_trace.h), not from names or the importer's code.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "import/chrome_reader.h"
#include "import/import_stats.h"
#include "import/trace_replay.h"
#include "model/kernel_signature.h"
#include "tests/unit/import/megatron_trace.h"
#include "tests/unit/import/trace_files.h"

using namespace argus;
using argus::testing::FixtureOp;
using argus::testing::FixtureRole;
using argus::testing::MegatronOptions;
using argus::testing::MegatronTrace;
using argus::testing::Expected;
using argus::testing::expectedRecords;
using model::PhaseColumn;

namespace {

std::string writeTrace(const MegatronOptions& o, MegatronTrace& t, const std::string& name, bool gzip = false) {
  std::ostringstream json;
  testing::writeChromeTrace(o, t, json);
  return testing::writeFile(name, gzip ? testing::gzipped(json.str()) : json.str());
}

struct Imported {
  std::vector<model::StepRecord> records;
  std::vector<capture::AssemblerStats> assemblers;
  import::ImportStats stats;
};

Imported replayAll(const import::ChromeTrace& trace, const import::ChromeMapping& mapping) {
  Imported out;
  for (const import::ChromeRank& rank : trace.ranks) {
    capture::StepAssemblerOptions options = import::chromeAssemblerOptions(rank.rank, mapping);
    options.exact_kernel_totals = true;  // the truth below is exact; the default is tested in capture
    import::StepRecordChecker checker(trace.names, rank.events, options.rules);
    out.assemblers.push_back(import::replayTrace(trace.names, rank.events, options, [&](const capture::StepOutput& s) {
      out.records.push_back(s.record);
      checker.add(s.record);
    }));
    out.stats.merge(checker.finish());
  }
  return out;
}

void checkAgainstTruth(const MegatronTrace& t, const Imported& got) {
  auto want = expectedRecords(t);
  REQUIRE(got.records.size() == want.size());
  for (const model::StepRecord& r : got.records) {
    CAPTURE(r.rank);
    CAPTURE(r.step);
    auto it = want.find({r.rank, r.step});
    REQUIRE(it != want.end());
    const Expected& x = it->second;
    CHECK(r.start_ns == x.start);
    CHECK(r.end_ns == x.end);
    CHECK(r.iter_ns == x.end - x.start);
    CHECK(r.flags == 0);
    for (int c = 0; c < model::kPhaseColumnCount; ++c) {
      CAPTURE(model::phaseColumnName(static_cast<PhaseColumn>(c)));
      CHECK(r.phase_ns[c] == x.phase[c]);
    }
    std::map<std::pair<uint64_t, model::Phase>, std::pair<uint32_t, int64_t>> kernels;
    for (const model::KernelStat& k : r.kernels) {
      kernels[{k.signature, k.phase}] = {k.count, k.total_ns};
      CHECK(k.hist.count() == k.count);
    }
    CHECK(kernels == x.kernels);
    std::map<std::tuple<model::CollectiveOp, uint64_t, uint8_t, uint32_t>, std::tuple<uint32_t, uint64_t, int64_t>> collectives;
    for (const model::CollectiveStat& c : r.collectives) {
      collectives[{c.op, c.communicator, c.size_class, c.peer_rank}] = {c.count, c.bytes, c.total_ns};
      CHECK(c.wait_ns == -1);
    }
    CHECK(collectives == x.collectives);
  }
}

}  // namespace

TEST_CASE("a 4-stage 1F1B pipeline: every record field matches the truth, under each way of naming ranks") {
  for (auto naming : {MegatronOptions::Naming::kProcessNames, MegatronOptions::Naming::kThreadNames, MegatronOptions::Naming::kPidIsRank}) {
    for (bool metadata_last : {false, true}) {
      CAPTURE(static_cast<int>(naming));
      CAPTURE(metadata_last);
      MegatronOptions o;
      o.naming = naming;
      o.metadata_last = metadata_last;
      MegatronTrace t = testing::makeMegatronTrace(o);
      std::string path = writeTrace(o, t, "pipeline.json");
      import::ChromeMapping mapping = import::ChromeMapping::defaults();
      auto trace = import::readChromeTrace(path, mapping);
      REQUIRE_MESSAGE(trace.isOk(), trace.status().toString());
      REQUIRE(trace->ranks.size() == 4);
      for (uint32_t r = 0; r < 4; ++r) CHECK(trace->ranks[r].rank == r);
      Imported got = replayAll(*trace, mapping);
      checkAgainstTruth(t, got);
      CHECK(got.records.size() == 12);

      // What the file held, counted independently.
      uint64_t work = 0, comm = 0, data = 0, enclosing = 0, ignored = 0;
      for (const FixtureOp& op : t.ops) {
        work += op.role == FixtureRole::kWork;
        comm += op.role == FixtureRole::kWork && op.phase == model::Phase::kCommunication;
        data += op.role == FixtureRole::kData;
        enclosing += op.role == FixtureRole::kEnclosing;
        ignored += op.role == FixtureRole::kIgnored;
      }
      const import::ChromeCounts& c = trace->counts;
      CHECK(c.complete == t.ops.size());
      CHECK(c.ops == work);
      CHECK(c.collectives == comm);
      CHECK(c.data_ranges == data);
      CHECK(c.enclosing == enclosing);
      CHECK(c.ignored == ignored);
      CHECK(c.not_read == t.instants + 1);  // instants and the closing counter
      CHECK(c.without_step == 0);
      CHECK(c.crossing == 0);
      CHECK(c.metadata == (naming == MegatronOptions::Naming::kProcessNames ? 4 * 6 : naming == MegatronOptions::Naming::kThreadNames ? 4 * 5 : 0));
      uint64_t kernels = 0;
      for (const auto& a : got.assemblers) {
        kernels += a.kernels;
        CHECK(a.outside_steps == 0);
        CHECK(a.late_events == 0);
        CHECK(a.invalid_events == 0);
        CHECK(a.bad_step_markers == 0);
      }
      CHECK(kernels == work);
      // The --stats checker agrees with the assembler on every step.
      CHECK(got.stats.steps == 12);
      CHECK(got.stats.kernels == work);
      CHECK(got.stats.count_mismatches == 0);
      CHECK(got.stats.total_max_abs_error_ns == 0);
      CHECK(got.stats.p99_max_rel_error <= 0.0101);
      std::remove(path.c_str());
    }
  }
}

TEST_CASE("the pipeline shows what it should: bubbles on every stage, exposed p2p, overlapped reduce-scatter") {
  MegatronOptions o;
  o.stages = 4;
  o.microbatches = 8;
  MegatronTrace t = testing::makeMegatronTrace(o);
  std::string path = writeTrace(o, t, "shape.json.gz", true);
  import::ChromeMapping mapping = import::ChromeMapping::defaults();
  auto trace = import::readChromeTrace(path, mapping);
  REQUIRE_MESSAGE(trace.isOk(), trace.status().toString());
  CHECK(trace->gzipped);
  Imported got = replayAll(*trace, mapping);
  checkAgainstTruth(t, got);
  for (const model::StepRecord& r : got.records) {
    CAPTURE(r.rank);
    // A 1F1B pipeline idles between microbatches (waiting for its neighbours).
    CHECK(r.phase(PhaseColumn::kBubble) > 0);
    CHECK(r.phase(PhaseColumn::kForward) > 0);
    CHECK(r.phase(PhaseColumn::kBackward) > r.phase(PhaseColumn::kForward));
    CHECK(r.phase(PhaseColumn::kOptimizer) > 0);
    CHECK(r.phase(PhaseColumn::kCommExposed) < r.phase(PhaseColumn::kCommTotal));
    // Only the first stage loads data.
    if (r.rank == 0) {
      CHECK(r.phase(PhaseColumn::kDataWait) > 0);
    } else {
      CHECK(r.phase(PhaseColumn::kDataWait) == 0);
    }
    // Collectives: send and recv to the pipeline neighbours, reduce-scatter and all-gather of the gradients.
    std::map<model::CollectiveOp, uint32_t> ops;
    for (const model::CollectiveStat& c : r.collectives) ops[c.op] += c.count;
    CHECK(ops[model::CollectiveOp::kReduceScatter] == 1);
    CHECK(ops[model::CollectiveOp::kAllGather] == 1);
    uint32_t neighbours = (r.rank > 0) + (r.rank < 3);
    CHECK(ops[model::CollectiveOp::kSend] == neighbours * 8);
    CHECK(ops[model::CollectiveOp::kRecv] == neighbours * 8);
  }
  std::remove(path.c_str());
}

TEST_CASE("overlapping steps: ops that start after the next step began count there, and say so") {
  // Step 1's optimizer starts after step 2's first op (an eager prefetch on another thread).
  std::string path = testing::tempPath("overlap.json");
  std::ofstream(path) << R"({"traceEvents":[
    {"ph":"X","name":"forward-compute","pid":0,"tid":0,"ts":100,"dur":50,"args":{"step":1,"microbatch":0}},
    {"ph":"X","name":"params-all-gather","pid":0,"tid":3,"ts":200,"dur":30,"args":{"step":2,"bytes":1024}},
    {"ph":"X","name":"optimizer-inner-step","pid":0,"tid":0,"ts":210,"dur":20,"args":{"step":1}},
    {"ph":"X","name":"forward-compute","pid":0,"tid":0,"ts":260,"dur":50,"args":{"step":2,"microbatch":0}},
    {"ph":"X","name":"untagged-kernel","pid":0,"tid":0,"ts":160,"dur":10,"args":{}}
  ]})";
  import::ChromeMapping mapping = import::ChromeMapping::defaults();
  auto trace = import::readChromeTrace(path, mapping);
  REQUIRE_MESSAGE(trace.isOk(), trace.status().toString());
  CHECK(trace->counts.crossing == 1);
  CHECK(trace->counts.without_step == 1);
  Imported got = replayAll(*trace, mapping);
  REQUIRE(got.records.size() == 2);
  const model::StepRecord& s1 = got.records[0];
  const model::StepRecord& s2 = got.records[1];
  CHECK(s1.step == 1);
  CHECK(s1.start_ns == 100'000);
  CHECK(s1.end_ns == 200'000);  // step 2 begins with its all-gather
  // The untagged op inside step 1's window counts in step 1 ("other" compute: no rule names it).
  CHECK(s1.phase(PhaseColumn::kForward) == 50'000);
  CHECK(s1.phase(PhaseColumn::kCompute) == 60'000);
  CHECK(s2.step == 2);
  CHECK(s2.start_ns == 200'000);
  CHECK(s2.end_ns == 310'000);
  CHECK(s2.phase(PhaseColumn::kOptimizer) == 20'000);  // the late optimizer op, where it began
  CHECK(s2.phase(PhaseColumn::kCommTotal) == 30'000);
  CHECK(s2.phase(PhaseColumn::kCommExposed) == 10'000);  // [200, 210) before the optimizer started
  std::remove(path.c_str());
}
