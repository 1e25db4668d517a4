#include "import/chrome_reader.h"

#include <algorithm>
#include <optional>
#include <regex>

#include "import/chrome_rank_builder.h"
#include "import/chrome_sax.h"
#include "import/trace_replay.h"

namespace argus::import {

namespace {

std::string joined(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) out += (out.empty() ? "args." : ", args.") + k;
  return out;
}

// Finds ranks and streams in process and thread names with the mapping's patterns.
class TrackNames {
 public:
  explicit TrackNames(const ChromeMapping& m) {
    // The patterns were compiled once when the mapping was read: these cannot throw.
    if (!m.rank_pattern.empty()) rank_.emplace(m.rank_pattern, std::regex::ECMAScript | std::regex::icase);
    if (!m.stream_pattern.empty()) stream_.emplace(m.stream_pattern, std::regex::ECMAScript | std::regex::icase);
  }
  std::optional<uint32_t> rank(const std::string& name) const { return find(rank_, name); }
  std::optional<uint32_t> stream(const std::string& name) const { return find(stream_, name); }

 private:
  static std::optional<uint32_t> find(const std::optional<std::regex>& re, const std::string& text) {
    std::smatch m;
    if (!re || text.empty() || !std::regex_search(text, m, *re) || m.size() < 2 || !m[1].matched) return std::nullopt;
    std::string digits = m[1].str();
    if (digits.empty() || digits.size() > 10 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    uint64_t v = std::stoull(digits);
    return v <= UINT32_MAX ? std::optional<uint32_t>(static_cast<uint32_t>(v)) : std::nullopt;
  }
  std::optional<std::regex> rank_, stream_;
};

struct TrackPlace {
  uint32_t rank = 0, stream = 0;
};

// Rank: the thread's name, else the process's name, else the pid when it is a number.
// Stream: the thread's name, else the process's name, else the tid.
Result<std::vector<TrackPlace>> placeTracks(const std::string& path, const ChromeSax& sax, const ChromeMapping& mapping) {
  TrackNames names(mapping);
  std::vector<TrackPlace> places;
  for (const ChromeTrack& t : sax.tracks()) {
    auto pn = sax.processNames().find(t.pid);
    auto tn = sax.threadNames().find({t.pid, t.tid});
    const std::string& process = pn != sax.processNames().end() ? pn->second : t.pid_text;
    const std::string& thread = tn != sax.threadNames().end() ? tn->second : t.tid_text;
    TrackPlace p;
    std::optional<uint32_t> rank = names.rank(thread);
    if (!rank) rank = names.rank(process);
    if (!rank && t.pid_text.empty() && t.pid <= UINT32_MAX) rank = static_cast<uint32_t>(t.pid);
    if (!rank) {
      return Status::invalidArgument(path + ": cannot tell the rank of thread '" + thread + "' of process '" + process +
                                     "': the rank pattern matches neither name and the pid is no number (set [names] rank = REGEX "
                                     "in a --map file)");
    }
    p.rank = *rank;
    std::optional<uint32_t> stream = names.stream(thread);
    if (!stream) stream = names.stream(process);
    p.stream = stream ? *stream : static_cast<uint32_t>(t.tid);
    places.push_back(p);
  }
  return places;
}

}  // namespace

Result<ChromeTrace> readChromeTrace(const std::string& path, const ChromeMapping& mapping) {
  ChromeTrace trace;
  trace.path = path;
  ChromeSax sax(mapping, &trace);
  Result<TraceFileFacts> facts = streamTraceJson(path, &sax, "Chrome trace");
  if (!facts.isOk()) return facts.status();
  trace.raw_bytes = facts->raw_bytes;
  trace.file_bytes = facts->file_bytes;
  trace.gzipped = facts->gzipped;
  const ChromeCounts& c = trace.counts;
  if (c.complete == 0) {
    std::string others = c.not_read > 0 ? " (" + std::to_string(c.not_read) + " of other phases: B/E, instants, counters are not read)" : "";
    return Status::invalidArgument(path + ": no complete (\"X\") events with ts and dur among " + std::to_string(c.trace_events) +
                                   " trace events" + others);
  }
  std::vector<ChromeOp>& ops = sax.ops();
  if (ops.empty()) {
    return Status::invalidArgument(path + ": the mapping ignores all " + std::to_string(c.complete) + " complete events: nothing to import");
  }
  if (c.without_step == ops.size()) {
    return Status::invalidArgument(path + ": no complete event carries a step (looked for " + joined(mapping.step_args) + "); the first, '" +
                                   sax.firstWithoutStepName() + "' at byte " + std::to_string(sax.firstWithoutStepByte()) +
                                   ", has none (name the key with [args] step = KEY in a --map file)");
  }
  Result<std::vector<TrackPlace>> places = placeTracks(path, sax, mapping);
  if (!places.isOk()) return places.status();

  // Ops by rank (file order within a rank), then each rank's events.
  std::vector<uint32_t> stream_of_track;
  for (const TrackPlace& p : *places) stream_of_track.push_back(p.stream);
  auto rankOf = [&](const ChromeOp& op) { return (*places)[op.track].rank; };
  std::stable_sort(ops.begin(), ops.end(), [&](const ChromeOp& a, const ChromeOp& b) { return rankOf(a) < rankOf(b); });
  for (size_t i = 0; i < ops.size();) {
    size_t j = i;
    while (j < ops.size() && rankOf(ops[j]) == rankOf(ops[i])) ++j;
    ChromeRankInput in{rankOf(ops[i]), std::span<const ChromeOp>(ops).subspan(i, j - i)};
    trace.ranks.push_back(buildChromeRank(in, stream_of_track, sax, &trace));
    i = j;
  }
  return trace;
}

capture::StepAssemblerOptions chromeAssemblerOptions(uint32_t rank, const ChromeMapping& mapping) {
  capture::StepAssemblerOptions options = importAssemblerOptions(rank, mapping.nameRules());
  options.infer_steps = false;
  return options;
}

}  // namespace argus::import
