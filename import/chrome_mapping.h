// ChromeMapping: what the generic Chrome-trace importer makes of names and args
// (docs/import/chrome.md, "Mapping file"): which op names are forward, backward,
// optimizer, communication (and which collective), data loading or to be ignored; which
// args keys hold the step, microbatch, bytes, peer and process group; and the patterns
// that find a rank and a stream in process and thread names.
//
// The built-in defaults are written in the mapping-file format itself (kDefaultMapping in
// chrome_mapping.cpp) and cover Megatron-style timer names. A user's file is read over
// them: its op rules are tried first, its settings replace the defaults' per key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "capture/name_rules.h"
#include "model/step_record.h"

namespace argus::import {

// What one complete event of a Chrome trace is to the importer.
enum class OpClass : uint8_t {
  kForward,
  kBackward,
  kOptimizer,
  kOther,          // compute of no particular phase (Phase::kOther)
  kCommunication,  // a collective or point-to-point transfer
  kData,           // data loading: a CPU range counted in data_wait, not device work
  kIgnore,         // dropped (enclosing timers such as Megatron's forward-backward)
};
const char* opClassName(OpClass c);

struct OpRule {
  capture::MatchKind match = capture::MatchKind::kExact;  // matched ASCII case-insensitively
  std::string pattern;
  OpClass cls = OpClass::kOther;
  // kCommunication: the collective; nullopt = from the op's name (capture::collectiveOpFromName).
  std::optional<model::CollectiveOp> op;
  std::string source;  // "FILE:LINE" (or "defaults:LINE"), for messages
};

// How an op name classifies: its class and, for communication, its collective.
struct OpKind {
  OpClass cls = OpClass::kOther;
  model::CollectiveOp op = model::CollectiveOp::kOther;
};

struct ChromeMapping {
  std::vector<OpRule> ops;  // first match wins
  OpClass fallback = OpClass::kOther;  // when no rule matches ("* = CLASS")
  // args keys, tried in order (the first present wins).
  std::vector<std::string> step_args, microbatch_args, bytes_args, peer_args, group_args;
  // ECMAScript regexes, case-insensitive, searched in process / thread names; capture
  // group 1 is the number. Empty: not searched.
  std::string rank_pattern, stream_pattern;

  // The built-in mapping (Megatron-style names).
  static ChromeMapping defaults();
  // The defaults with the mapping file at `path` read over them. Errors name the file and line.
  static Result<ChromeMapping> load(const std::string& path);
  // Reads mapping-file text over this mapping (its op rules go before the rules it had).
  // `source` names the text in messages.
  Status apply(std::string_view text, std::string_view source);

  OpKind classify(std::string_view name) const;
  // The assembler's name rules for ops classified by this mapping: the same rules, as
  // kernel rules (phase) and range rules (data loading), plus the importer's own step
  // (`argus:step#N`) and microbatch (`argus:microbatch`) ranges. Classifying an op's name
  // with them agrees with classify() for every op the importer hands to the assembler.
  capture::NameRules nameRules() const;
};

// The assembler-facing names of the importer's synthetic ranges.
inline constexpr std::string_view kStepRangePrefix = "argus:step";
inline constexpr std::string_view kMicrobatchRangeName = "argus:microbatch";

}  // namespace argus::import
