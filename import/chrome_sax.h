// ChromeSax: the SAX handler behind readChromeTrace. On the shared walk (TraceJsonSax) it
// keeps, of each traceEvents[] element, only what the generic importer uses
// (docs/import/chrome.md): complete ("X") events as compact ChromeOps with the step,
// microbatch, bytes, peer and group args the mapping names, and the process / thread names
// of "M" metadata events. Ranks and streams are resolved after the parse, since metadata
// may come anywhere in the file. Strings are copied into reused buffers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/chrome_mapping.h"
#include "import/chrome_trace.h"
#include "import/trace_json.h"

namespace argus::import {

inline constexpr uint64_t kNoArg = UINT64_MAX;

// One kept complete event (not of class ignore), before its rank is known (64 bytes).
struct ChromeOp {
  int64_t start_ns = 0, end_ns = 0;
  uint64_t step = kNoArg, microbatch = kNoArg;
  uint64_t bytes = 0;
  uint64_t group = 0;        // XXH3-64 of the process group arg; 0 when absent
  uint32_t name = 0;         // NameTable id
  uint32_t track = 0;        // index into ChromeSax::tracks()
  uint32_t peer = UINT32_MAX;  // model::CollectiveStat::kNoPeer when absent
  uint32_t event_bytes = 0;  // JSON bytes of the event object (saturating)
};

// A (pid, tid) pair, as the file writes it; the texts are kept when an id was a string
// that is no number (its id is then a hash).
struct ChromeTrack {
  uint64_t pid = 0, tid = 0;
  std::string pid_text, tid_text;
};

class ChromeSax : public TraceJsonSax {
 public:
  ChromeSax(const ChromeMapping& mapping, ChromeTrace* trace) : mapping_(mapping), trace_(trace) {}

  std::vector<ChromeOp>& ops() { return ops_; }
  const std::vector<ChromeTrack>& tracks() const { return tracks_; }
  // "M" process_name by pid, thread_name by (pid, tid).
  const std::unordered_map<uint64_t, std::string>& processNames() const { return process_names_; }
  const std::map<std::pair<uint64_t, uint64_t>, std::string>& threadNames() const { return thread_names_; }
  // The class of every name id interned so far (classified once per distinct name).
  const OpKind& kindOf(uint32_t name) const { return kinds_[name]; }
  // The first kept complete event without a step arg: its byte offset (kNoArg when none) and name.
  uint64_t firstWithoutStepByte() const { return first_without_step_byte_; }
  const std::string& firstWithoutStepName() const { return first_without_step_name_; }

 protected:
  void beginEvent() override { ev_.reset(); }
  void argsValue(const std::string& key, const JsonScalar& v) override;
  void endEvent() override;

 private:
  // The args of the current traceEvents[] element (the walk keeps its head).
  struct Scratch {
    std::string meta_name, group;
    uint64_t step = kNoArg, microbatch = kNoArg, bytes = 0, peer = kNoArg;
    int step_rank = -1, microbatch_rank = -1, bytes_rank = -1, peer_rank = -1, group_rank = -1;
    bool bad_args = false;
    void reset();
  };
  uint32_t trackOf();
  uint32_t internName();

  const ChromeMapping& mapping_;
  ChromeTrace* trace_;
  Scratch ev_;
  std::vector<ChromeOp> ops_;
  std::vector<OpKind> kinds_;  // by name id
  std::vector<ChromeTrack> tracks_;
  std::map<std::pair<uint64_t, uint64_t>, uint32_t> track_index_;
  uint64_t last_pid_ = UINT64_MAX, last_tid_ = UINT64_MAX;  // the track found last (events come in runs per thread)
  uint32_t last_track_ = 0;
  std::unordered_map<uint64_t, std::string> process_names_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> thread_names_;
  uint64_t first_without_step_byte_ = kNoArg;
  std::string first_without_step_name_;
};

}  // namespace argus::import
