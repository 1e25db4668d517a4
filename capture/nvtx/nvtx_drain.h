// Drain: the collector's side of the NVTX source (docs/capture/nvtx.md). It empties the
// training threads' rings and turns their records into TraceEvents for the StepAssembler
// (and the FlightRecorder), with names interned in the collector's NameTable.
//
//   NameTable names;                        // shared with the other sources of the shim
//   nvtx::Drain drain(nvtx::Recorder::instance(), names);
//   for (const TraceEvent& e : drain.drain()) assembler.onEvent(e);   // every ~10-100 ms
//
// What comes out (all times Unix-epoch ns, `thread` = OS thread id):
//  - default-domain push / pop: kRangeBegin / kRangeEnd on the calling thread;
//  - push / pop in a domain of its own: one kRange [push, pop) at the pop (NVTX nests each
//    domain separately, so their pops could close the wrong range of the thread's stack);
//  - nvtxRangeStart / End: one kRange [start, end) once both are seen, on the starting thread;
//  - marks: kMark.
// Names: the message; in a created domain "<domain>:<message>" (unless the message already
// starts with that prefix). A step marker without a number (NameRules::steps: "argus:step",
// "ProfilerStep#") with a non-negative integer payload becomes "<marker>#<payload>". Integer
// payloads are also kept in TraceEvent::id (sign-extended); floating ones are not kept.
//
// Order: each drain() returns the records published since the previous one, merged across
// threads by the time of the call that completed the event (push, pop, end, mark). Events
// of one thread keep their order; a kRange comes when it ends, carrying its earlier start.
//
// Not thread-safe: one thread (the collector) calls drain(), and one Drain exists at a time.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/name_rules.h"
#include "capture/name_table.h"
#include "capture/nvtx/nvtx_recorder.h"
#include "capture/nvtx/pending_ranges.h"
#include "capture/trace_event.h"

namespace argus::capture::nvtx {

struct DrainOptions {
  // Step markers: which bare names take their step number from an integer payload.
  NameRules rules = NameRules::defaults();
  bool step_from_payload = true;
  // nvtxRangeStart ranges still waiting for their end (or ends waiting for their start, when
  // another thread's ring was drained first). Beyond this, the oldest half is forgotten.
  size_t max_pending_ranges = 1 << 16;
};

// Counters since the Recorder started (thread side) or the Drain was made (drain side).
struct NvtxStats {
  uint64_t records = 0;  // records read from the rings
  uint64_t events = 0;   // TraceEvents handed out
  uint64_t threads = 0;  // thread states (threads that ever called NVTX, reused ones once)
  // Lost on the training threads (ThreadCounters):
  uint64_t dropped = 0;          // ring full, or capture off
  uint64_t depth_overflow = 0;   // pushes deeper than 128 in one domain (pops absorbed)
  uint64_t unmatched_pops = 0;   // pops with nothing open in their domain
  uint64_t bad_handles = 0;      // domain handles Argus never issued
  uint64_t truncated_names = 0;  // names cut to 1,024 bytes
  // Lost or odd in the drain:
  uint64_t unknown_names = 0;      // name references the drain could not resolve (event kept, unnamed)
  uint64_t unended_ranges = 0;     // nvtxRangeStart never ended (forgotten at the pending bound)
  uint64_t unstarted_ends = 0;     // nvtxRangeEnd of a start never seen (dropped, or foreign id)
  uint64_t open_at_exit = 0;       // domain pushes still open when their thread exited
  uint64_t pops_before_drain = 0;  // pops of pushes buffered before this Drain attached (discarded)
  uint64_t domains_refused = 0;    // nvtxDomainCreate beyond 255 domains (their events are dropped)
  uint64_t strings_refused = 0;    // nvtxDomainRegisterString beyond 16,383 strings (unnamed)
};

class Drain {
 public:
  // Becomes the recorder's consumer: discards what the rings hold now and makes every thread
  // re-announce its names. `names` must outlive the Drain; drain() interns into it.
  Drain(Recorder& recorder, NameTable& names, DrainOptions options = {});
  Drain(const Drain&) = delete;
  Drain& operator=(const Drain&) = delete;

  // Converts everything published since the last call. The span stays valid until the next
  // call. Allocates only for new names, new threads and while its buffers grow.
  std::span<const TraceEvent> drain();

  // Names given with nvtxNameOsThread, by OS thread id.
  const std::unordered_map<uint32_t, std::string>& threadNames() const { return thread_names_; }
  NvtxStats stats() const;

 private:
  // One converted record, before the merge across threads.
  struct Item {
    enum Op : uint8_t { kEvent, kStart, kEnd };
    int64_t key;  // time of the call that completes it
    Op op;
    uint64_t range;  // kStart / kEnd: range id
    TraceEvent event;
  };
  struct OpenPush {  // a push in a created domain, until its pop
    uint32_t domain;
    uint32_t name;
    int64_t begin;
    uint64_t payload;
  };
  struct PerThread {
    std::vector<uint32_t> slot_names;  // name id of each cache slot reference
    std::vector<OpenPush> open;
    uint32_t default_depth = 0;  // default-domain begins handed out and not yet ended
    std::vector<Item> items;
    size_t cursor = 0;
  };

  void readThread(ThreadState& s, PerThread& pt, bool discard);
  void convert(const ThreadState& s, PerThread& pt, const Record& r, uint64_t pos);
  void merge();
  void onStart(const Item& it);
  void onEnd(const Item& it);
  uint32_t nameOf(PerThread& pt, const Record& r);
  uint32_t composeName(uint32_t domain, std::string_view text);
  // The step marker name with its payload as number, or `name` when that does not apply.
  uint32_t numberedStep(uint32_t name, const Record& r);
  static uint64_t payloadId(const Record& r);

  Recorder& recorder_;
  NameTable& names_;
  const DrainOptions options_;
  NvtxStats stats_;                 // drain-side counters
  std::vector<PerThread> threads_;  // by ThreadState::index
  std::vector<uint32_t> merging_;   // thread indices with items this drain
  std::vector<TraceEvent> out_;
  PendingRanges pending_;
  std::unordered_map<uint64_t, uint32_t> registered_names_;  // (domain << 32 | string id) -> name id
  std::vector<uint8_t> marker_kind_;                         // by name id: 0 unknown, 1 bare step marker, 2 neither
  std::unordered_map<uint32_t, std::string> thread_names_;
  std::string scratch_;
  std::vector<char> text_;
};

}  // namespace argus::capture::nvtx
