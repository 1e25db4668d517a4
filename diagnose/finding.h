// Finding: what the diagnosis concludes about one cause of slowness (DESIGN §7): its kind,
// the steps it covers, where it is (ranks, stage, link, kernel), how much it costs and how
// sure the diagnosis is, with the numbers that convinced it. The rows of `diagnose()`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace argus::diagnose {

// Do not rename: the `kind` column's values, and what `argus eval` scores. Do not renumber:
// recorded findings store them (docs/format/keys.md).
enum class FindingKind : uint8_t {
  kComputeStraggler = 0,
  kMaskedStraggler = 1,
  kLinkDegradation = 2,
  kPipelineBubble = 3,
  kJitStall = 4,
  kDegradedKernel = 5,
  kUnexplained = 6,
};
const char* findingKindName(FindingKind kind);

struct Finding {
  FindingKind kind = FindingKind::kUnexplained;
  uint64_t from_step = 0, to_step = 0;  // inclusive
  int64_t from_ns = 0, to_ns = 0;       // the window's wall clock: from_step's start, to_step's end
  std::vector<uint32_t> ranks;          // the ranks to blame (empty: a stage or a link)
  std::optional<uint32_t> pp_rank;      // the stage, when the finding is about one
  std::string link;                     // "node-00014/node-00015", when about one
  std::string kernel;                   // kernel name, when about one
  double slowdown = 0;                  // the job's step time in the window over its baseline, minus 1
  double confidence = 0;                // 0..1
  std::string evidence;                 // the numbers, for a person
};

// "4711" or "3,17,22" (ascending).
std::string rankList(const std::vector<uint32_t>& ranks);

// A kernel name short enough for a sentence: without its parameter list, and without its
// template arguments when still longer than 80 bytes.
std::string shortKernelName(const std::string& name);

}  // namespace argus::diagnose
