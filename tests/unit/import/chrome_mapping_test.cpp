// The Chrome-trace mapping: Megatron defaults, a user file read over them, the assembler's
// name rules agreeing with classify(), and every malformed line named by file and line.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "import/chrome_mapping.h"

using namespace argus;
using import::ChromeMapping;
using import::OpClass;
using Op = model::CollectiveOp;

namespace {

std::string writeMap(const std::string& name, const std::string& text) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/argus-map-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

// The assembler must see an op the way the importer classified it.
void checkRulesAgree(const ChromeMapping& m, std::string_view name) {
  CAPTURE(name);
  capture::NameRules rules = m.nameRules();
  import::OpKind k = m.classify(name);
  CHECK_FALSE(rules.stepMarker(name).has_value());
  if (k.cls == OpClass::kData) {
    CHECK(rules.classifyRange(name) == capture::RangeClass::kDataLoad);
    return;
  }
  // Only data ops become ranges; the others are kernels (or nothing).
  if (k.cls == OpClass::kIgnore) return;
  capture::KernelClass kc = rules.classifyKernel(name);
  CHECK(kc.communication == (k.cls == OpClass::kCommunication));
  model::Phase want = k.cls == OpClass::kForward     ? model::Phase::kForward
                      : k.cls == OpClass::kBackward  ? model::Phase::kBackward
                      : k.cls == OpClass::kOptimizer ? model::Phase::kOptimizer
                      : k.cls == OpClass::kOther     ? model::Phase::kOther
                                                     : model::Phase::kCommunication;
  CHECK(kc.phase == want);
}

const char* kNames[] = {"forward-compute", "backward-compute", "forward-send", "forward-recv", "backward-send", "backward-recv",
                        "forward-send-backward-recv", "backward-send-forward-recv", "grads-reduce-scatter", "params-all-gather",
                        "optimizer", "optimizer-inner-step", "layernorm-grads-all-reduce", "all-grads-sync", "batch-generator",
                        "forward-backward", "Forward-Compute", "ncclKernel_AllReduce_RING_LL", "attention", "argus:microbatch-lookalike"};

}  // namespace

TEST_CASE("the defaults classify Megatron's timer names") {
  ChromeMapping m = ChromeMapping::defaults();
  struct Want {
    const char* name;
    OpClass cls;
    Op op;
  };
  for (const Want& w : {
           Want{"forward-compute", OpClass::kForward, Op::kOther},
           {"backward-compute", OpClass::kBackward, Op::kOther},
           {"Forward-Compute", OpClass::kForward, Op::kOther},  // any case
           {"forward-send", OpClass::kCommunication, Op::kSend},
           {"forward-recv", OpClass::kCommunication, Op::kRecv},
           {"backward-send", OpClass::kCommunication, Op::kSend},
           {"backward-recv", OpClass::kCommunication, Op::kRecv},
           {"forward-send-backward-recv", OpClass::kCommunication, Op::kSendRecv},
           {"backward-send-forward-recv", OpClass::kCommunication, Op::kSendRecv},
           {"grads-reduce-scatter", OpClass::kCommunication, Op::kReduceScatter},
           {"params-all-gather", OpClass::kCommunication, Op::kAllGather},
           {"layernorm-grads-all-reduce", OpClass::kCommunication, Op::kAllReduce},
           {"embedding-grads-all-reduce", OpClass::kCommunication, Op::kAllReduce},
           {"all-grads-sync", OpClass::kCommunication, Op::kAllReduce},
           {"ncclKernel_AllReduce_RING_LL", OpClass::kCommunication, Op::kAllReduce},  // the op from the name
           {"optimizer", OpClass::kOptimizer, Op::kOther},
           {"optimizer-copy-main-to-model-params", OpClass::kOptimizer, Op::kOther},
           {"batch-generator", OpClass::kData, Op::kOther},
           {"forward-backward", OpClass::kIgnore, Op::kOther},
           {"attention", OpClass::kOther, Op::kOther},  // no rule: the fallback
       }) {
    CAPTURE(w.name);
    import::OpKind k = m.classify(w.name);
    CHECK(import::opClassName(k.cls) == std::string(import::opClassName(w.cls)));
    CHECK(model::collectiveOpName(k.op) == std::string(model::collectiveOpName(w.op)));
  }
  CHECK(m.step_args == std::vector<std::string>{"step", "iteration", "iter"});
  CHECK(m.microbatch_args.front() == "microbatch");
  CHECK(m.bytes_args.front() == "bytes");
  for (const char* name : kNames) checkRulesAgree(m, name);
  capture::NameRules rules = m.nameRules();
  CHECK(rules.stepMarker("argus:step#12") == 12);
  CHECK(rules.classifyRange("argus:microbatch") == capture::RangeClass::kMicrobatch);
}

TEST_CASE("a user file is read over the defaults: its rules first, its settings per key") {
  std::string path = writeMap("user.map", R"(# a made-up tool
attn-fwd = forward
[args]
step = iteration_id, global_step
microbatch =
[names]
rank = gpu ?([0-9]+)
[ops]
*all-gather* = other
weird=name = backward
* = ignore
)");
  auto m = ChromeMapping::load(path);
  REQUIRE_MESSAGE(m.isOk(), m.status().toString());
  CHECK(m->classify("attn-fwd").cls == OpClass::kForward);       // a rule before any section is an [ops] rule
  CHECK(m->classify("params-all-gather").cls == OpClass::kOther);  // the user's rule beats the default
  CHECK(m->classify("weird=name").cls == OpClass::kBackward);      // a rule splits at its last '='
  CHECK(m->classify("forward-compute").cls == OpClass::kForward);  // defaults still apply
  CHECK(m->classify("something else").cls == OpClass::kIgnore);    // the fallback
  CHECK(m->step_args == std::vector<std::string>{"iteration_id", "global_step"});
  CHECK(m->microbatch_args.empty());
  CHECK(m->rank_pattern == "gpu ?([0-9]+)");
  CHECK(m->stream_pattern == ChromeMapping::defaults().stream_pattern);
  for (const char* name : kNames) checkRulesAgree(*m, name);
  std::remove(path.c_str());

  // A fallback of data makes every unnamed op a data range, in the assembler's rules too.
  ChromeMapping d = ChromeMapping::defaults();
  REQUIRE(d.apply("* = data\nmatmul = forward\n", "inline").isOk());
  CHECK(d.classify("anything").cls == OpClass::kData);
  for (const char* name : {"anything", "matmul", "forward-send", "forward-backward"}) checkRulesAgree(d, name);
}

TEST_CASE("malformed mapping lines are errors naming the file and line") {
  struct Bad {
    const char* text;
    const char* message;
  };
  for (const Bad& b : {
           Bad{"[arg]\n", "x.map:1: unknown section [arg]"},
           {"\n\nforward-compute\n", "x.map:3: expected 'KEY = VALUE'"},
           {"forward-compute = fwd\n", "x.map:1: unknown class 'fwd'"},
           {"forward-compute = forward all_reduce\n", "x.map:1: only communication takes a collective"},
           {"x = communication allreduce\n", "x.map:1: unknown collective 'allreduce'"},
           {"a*b = forward\n", "x.map:1: pattern 'a*b'"},
           {"*abc = forward\n", "x.map:1: pattern '*abc'"},
           {" = forward\n", "x.map:1: nothing before '='"},
           {"[names]\nrank = rank([\n", "x.map:2: bad rank pattern"},
           {"[names]\nstream = stream[0-9]+\n", "x.map:2: stream pattern needs a capture group"},
           {"[names]\nhost = h\n", "x.map:2: unknown [names] key 'host'"},
           {"[args]\nsteps = s\n", "x.map:2: unknown [args] key 'steps'"},
           {"[args]\nstep =\n", "x.map:2: step needs at least one args key"},
       }) {
    CAPTURE(b.text);
    ChromeMapping m = ChromeMapping::defaults();
    Status s = m.apply(b.text, "x.map");
    REQUIRE_FALSE(s.isOk());
    INFO(s.message());
    CHECK(s.message().find(b.message) != std::string::npos);
  }
  auto missing = ChromeMapping::load("/nonexistent/argus.map");
  REQUIRE_FALSE(missing.isOk());
  CHECK(missing.status().message().find("--map /nonexistent/argus.map: cannot open") != std::string::npos);
  std::string path = writeMap("bad.map", "# ok\nforward = sideways\n");
  auto bad = ChromeMapping::load(path);
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.status().message().find(path + ":2: unknown class 'sideways'") != std::string::npos);
  std::remove(path.c_str());
}
