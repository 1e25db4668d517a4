#include "import/chrome_mapping.h"

#include <algorithm>
#include <cassert>
#include <fstream>
#include <regex>
#include <sstream>

namespace argus::import {

namespace {

// The defaults, in the mapping-file format (docs/import/chrome.md shows the same text).
// Order matters: the first matching rule wins, so combined and specific names come before
// the patterns they contain (forward-send-backward-recv before *send*, *-send* before forward*).
constexpr std::string_view kDefaultMapping = R"(
[args]
step = step, iteration, iter
microbatch = microbatch, micro_batch, microbatch_id, mb
bytes = bytes, msg_bytes, size_bytes
peer = peer, peer_rank
group = group, process_group, pg

[names]
rank = rank[^0-9a-z]*([0-9]+)
stream = stream[^0-9a-z]*([0-9]+)

[ops]
# Megatron's timer around the whole forward-backward schedule: its children are the work.
forward-backward = ignore
# Pipeline point-to-point (Megatron p2p_communication).
forward-send-forward-recv = communication send_recv
forward-send-backward-recv = communication send_recv
backward-send-forward-recv = communication send_recv
backward-send-backward-recv = communication send_recv
*nccl* = communication
*sendrecv* = communication send_recv
*send_recv* = communication send_recv
*send* = communication send
*recv* = communication recv
# Data-parallel, tensor-parallel and expert-parallel collectives.
*reduce-scatter* = communication reduce_scatter
*reduce_scatter* = communication reduce_scatter
*reducescatter* = communication reduce_scatter
*all-gather* = communication all_gather
*all_gather* = communication all_gather
*allgather* = communication all_gather
*all-reduce* = communication all_reduce
*all_reduce* = communication all_reduce
*allreduce* = communication all_reduce
all-grads-sync = communication all_reduce
*all-to-all* = communication all_to_all
*all_to_all* = communication all_to_all
*alltoall* = communication all_to_all
*broadcast* = communication broadcast
*barrier* = communication barrier
# Data loading.
batch-generator* = data
*dataloader* = data
*data-load* = data
*data_load* = data
# Phases.
forward* = forward
backward* = backward
optimizer* = optimizer
* = other
)";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<OpClass> parseClass(std::string_view s) {
  for (OpClass c : {OpClass::kForward, OpClass::kBackward, OpClass::kOptimizer, OpClass::kOther, OpClass::kCommunication, OpClass::kData,
                    OpClass::kIgnore}) {
    if (s == opClassName(c)) return c;
  }
  return std::nullopt;
}

std::optional<model::CollectiveOp> parseOp(std::string_view s) {
  for (uint8_t i = 0; i <= static_cast<uint8_t>(model::CollectiveOp::kBarrier); ++i) {
    auto op = static_cast<model::CollectiveOp>(i);
    if (s == model::collectiveOpName(op)) return op;
  }
  return std::nullopt;
}

std::vector<std::string> splitList(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    size_t comma = s.find(',');
    std::string_view item = trim(s.substr(0, comma));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

model::Phase phaseOf(OpClass c) {
  switch (c) {
    case OpClass::kForward: return model::Phase::kForward;
    case OpClass::kBackward: return model::Phase::kBackward;
    case OpClass::kOptimizer: return model::Phase::kOptimizer;
    case OpClass::kCommunication: return model::Phase::kCommunication;
    case OpClass::kData: return model::Phase::kDataLoad;
    case OpClass::kOther:
    case OpClass::kIgnore: break;
  }
  return model::Phase::kOther;
}

}  // namespace

const char* opClassName(OpClass c) {
  switch (c) {
    case OpClass::kForward: return "forward";
    case OpClass::kBackward: return "backward";
    case OpClass::kOptimizer: return "optimizer";
    case OpClass::kOther: return "other";
    case OpClass::kCommunication: return "communication";
    case OpClass::kData: return "data";
    case OpClass::kIgnore: return "ignore";
  }
  return "invalid";
}

ChromeMapping ChromeMapping::defaults() {
  ChromeMapping m;
  Status s = m.apply(kDefaultMapping, "defaults");
  assert(s.isOk() && "BUG: the built-in Chrome-trace mapping does not parse");
  (void)s;
  return m;
}

Result<ChromeMapping> ChromeMapping::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::ioError("--map " + path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  ChromeMapping m = defaults();
  ARGUS_RETURN_IF_ERROR(m.apply(text.str(), path));
  return m;
}

Status ChromeMapping::apply(std::string_view text, std::string_view source) {
  enum class Section { kArgs, kNames, kOps } section = Section::kOps;  // a file of rules alone needs no header
  size_t insert_at = 0;  // this text's rules go first, in file order
  int line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    std::string where = std::string(source) + ":" + std::to_string(line_no);
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[') {
      if (line == "[args]") section = Section::kArgs;
      else if (line == "[names]") section = Section::kNames;
      else if (line == "[ops]") section = Section::kOps;
      else return Status::invalidArgument(where + ": unknown section " + std::string(line) + " (expected [args], [names] or [ops])");
      continue;
    }
    // Op names may contain '=': a rule splits at its last one; settings at the first.
    size_t eq = section == Section::kOps ? line.rfind('=') : line.find('=');
    if (eq == std::string_view::npos) return Status::invalidArgument(where + ": expected 'KEY = VALUE', got '" + std::string(line) + "'");
    std::string_view key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    if (key.empty()) return Status::invalidArgument(where + ": nothing before '='");
    if (section == Section::kArgs) {
      std::vector<std::string>* slot = key == "step"         ? &step_args
                                       : key == "microbatch" ? &microbatch_args
                                       : key == "bytes"      ? &bytes_args
                                       : key == "peer"       ? &peer_args
                                       : key == "group"      ? &group_args
                                                             : nullptr;
      if (slot == nullptr) {
        return Status::invalidArgument(where + ": unknown [args] key '" + std::string(key) + "' (step, microbatch, bytes, peer, group)");
      }
      *slot = splitList(value);
      if (key == "step" && slot->empty()) return Status::invalidArgument(where + ": step needs at least one args key");
    } else if (section == Section::kNames) {
      if (key != "rank" && key != "stream") {
        return Status::invalidArgument(where + ": unknown [names] key '" + std::string(key) + "' (rank, stream)");
      }
      if (!value.empty()) {
        try {
          std::regex re{std::string(value), std::regex::ECMAScript | std::regex::icase};
          if (re.mark_count() < 1) return Status::invalidArgument(where + ": " + std::string(key) + " pattern needs a capture group for the number");
        } catch (const std::regex_error& e) {
          return Status::invalidArgument(where + ": bad " + std::string(key) + " pattern '" + std::string(value) + "': " + e.what());
        }
      }
      (key == "rank" ? rank_pattern : stream_pattern) = std::string(value);
    } else {
      // VALUE is CLASS, or "communication" and optionally the collective.
      std::string_view cls_text = value.substr(0, value.find(' '));
      std::string_view op_text = cls_text.size() < value.size() ? trim(value.substr(cls_text.size())) : std::string_view{};
      std::optional<OpClass> cls = parseClass(cls_text);
      if (!cls) {
        return Status::invalidArgument(where + ": unknown class '" + std::string(cls_text) +
                                       "' (forward, backward, optimizer, other, communication, data, ignore)");
      }
      OpRule rule;
      rule.cls = *cls;
      rule.source = where;
      if (!op_text.empty()) {
        if (*cls != OpClass::kCommunication) return Status::invalidArgument(where + ": only communication takes a collective");
        rule.op = parseOp(op_text);
        if (!rule.op) {
          return Status::invalidArgument(where + ": unknown collective '" + std::string(op_text) +
                                         "' (all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send, recv, send_recv, "
                                         "barrier, other)");
        }
      }
      if (key == "*") {
        fallback = *cls;
        continue;
      }
      // NAME exact, NAME* prefix, *NAME* contains: the three matches of capture::NameRules.
      size_t stars = static_cast<size_t>(std::count(key.begin(), key.end(), '*'));
      if (stars == 0) {
        rule.match = capture::MatchKind::kExact;
      } else if (stars == 1 && key.back() == '*' && key.size() > 1) {
        rule.match = capture::MatchKind::kPrefix;
        key.remove_suffix(1);
      } else if (stars == 2 && key.front() == '*' && key.back() == '*' && key.size() > 2) {
        rule.match = capture::MatchKind::kContains;
        key = key.substr(1, key.size() - 2);
      } else {
        return Status::invalidArgument(where + ": pattern '" + std::string(key) +
                                       "': '*' goes at the end (prefix) or at both ends (contains), or alone (the fallback)");
      }
      rule.pattern = std::string(key);
      ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(insert_at++), std::move(rule));
    }
  }
  return Status::ok();
}

OpKind ChromeMapping::classify(std::string_view name) const {
  for (const OpRule& r : ops) {
    if (!capture::matches(r.match, true, r.pattern, name)) continue;
    OpKind k{r.cls, model::CollectiveOp::kOther};
    if (r.cls == OpClass::kCommunication) k.op = r.op ? *r.op : capture::collectiveOpFromName(name);
    return k;
  }
  return OpKind{fallback, model::CollectiveOp::kOther};
}

capture::NameRules ChromeMapping::nameRules() const {
  capture::NameRules rules;
  rules.steps = {{std::string(kStepRangePrefix)}};
  rules.ranges.push_back({capture::MatchKind::kPrefix, false, std::string(kMicrobatchRangeName), capture::RangeClass::kMicrobatch});
  for (const OpRule& r : ops) {
    // Every rule stays in both lists so that the first match is the same rule as in
    // classify(); only data ops become ranges and only work ops kernels.
    rules.ranges.push_back({r.match, true, r.pattern, r.cls == OpClass::kData ? capture::RangeClass::kDataLoad : capture::RangeClass::kNone});
    rules.kernels.push_back({r.match, true, r.pattern, phaseOf(r.cls)});
  }
  // An unmatched name falls back alike in both lists: kernels by kernel_default; ranges
  // are kNone when no rule matches, so a data fallback needs a rule that matches anything
  // (the empty contains-pattern).
  if (fallback == OpClass::kData) rules.ranges.push_back({capture::MatchKind::kContains, false, "", capture::RangeClass::kDataLoad});
  rules.kernel_default = phaseOf(fallback);
  return rules;
}

}  // namespace argus::import
