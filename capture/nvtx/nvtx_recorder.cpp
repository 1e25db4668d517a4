#include "capture/nvtx/nvtx_recorder.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <new>

#include "capture/nvtx/epoch_clock.h"
#include "capture/nvtx/utf8.h"

namespace argus::capture::nvtx {

namespace {

// The calling thread's state. A plain pointer (constant-initialized, no destructor), so
// reading it costs one TLS load; the destructor that retires the state lives in a second
// thread_local touched only on the first call (Retirer).
thread_local ThreadState* t_state = nullptr;
thread_local bool t_exited = false;  // the Retirer ran: this thread records nothing more

struct Retirer {
  ThreadState* state = nullptr;
  ~Retirer() {
    if (state == nullptr) return;
    // Release: every record the thread published happens-before the drain sees kRetired.
    state->status.store(ThreadState::kRetired, std::memory_order_release);
    t_state = nullptr;
    t_exited = true;
  }
};
thread_local Retirer t_retirer;

constexpr uint64_t kRangeCounterMask = (uint64_t{1} << 39) - 1;

}  // namespace

Recorder& Recorder::instance() {
  // Never destroyed: threads may still call NVTX while static destructors run.
  static Recorder* recorder = new Recorder();
  return *recorder;
}

void Recorder::setRingSlots(uint32_t slots) {
  uint32_t n = 64;
  while (n < slots && n < (1u << 30)) n <<= 1;
  ring_slots_.store(n, std::memory_order_relaxed);
}

inline ThreadState* Recorder::state() {
  ThreadState* t = t_state;
  if (__builtin_expect(t == nullptr, 0)) return attach();
  uint32_t g = generation_.load(std::memory_order_relaxed);
  if (__builtin_expect(t->generation != g, 0)) {
    t->names.clear();
    t->generation = g;
  }
  return t;
}

ThreadState* Recorder::attach() {
  if (t_exited) return nullptr;
  uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  uint32_t g = generation_.load(std::memory_order_relaxed);
  // Reuse the state of an exited thread that the drain has emptied.
  for (ThreadState* s = threads(); s != nullptr; s = s->next) {
    uint8_t expected = ThreadState::kFree;
    if (s->status.load(std::memory_order_relaxed) == ThreadState::kFree &&
        s->status.compare_exchange_strong(expected, ThreadState::kActive, std::memory_order_acq_rel)) {
      s->resetForNewThread(tid, g);
      t_state = s;
      t_retirer.state = s;
      return s;
    }
  }
  ThreadState* s = nullptr;
  try {
    s = new ThreadState(next_index_.fetch_add(1, std::memory_order_relaxed), ring_slots_.load(std::memory_order_relaxed));
  } catch (...) {
    return nullptr;  // out of memory: this thread records nothing (its calls stay no-ops)
  }
  s->resetForNewThread(tid, g);
  ThreadState* head = threads_.load(std::memory_order_relaxed);
  do {
    s->next = head;
  } while (!threads_.compare_exchange_weak(head, s, std::memory_order_release, std::memory_order_relaxed));
  t_state = s;
  t_retirer.state = s;
  return s;
}

namespace {

// The UTF-8 text of an ASCII or wide message (wide ones converted into t.text); 0 bytes
// when there is none.
uint32_t messageText(ThreadState& t, const Message& m, const char** text) {
  bool truncated = false;
  uint32_t bytes = 0;
  if (m.kind == Message::Kind::kAscii && m.ascii != nullptr) {
    *text = m.ascii;
    bytes = static_cast<uint32_t>(boundedUtf8Length(m.ascii, Registry::kMaxTextBytes, &truncated));
  } else if (m.kind == Message::Kind::kWide && m.wide != nullptr) {
    *text = t.text;
    bytes = static_cast<uint32_t>(wideToUtf8(m.wide, t.text, sizeof(t.text), &truncated));
  }
  if (truncated) bump(t.counters.truncated);
  return bytes;
}

}  // namespace

void Recorder::resolve(ThreadState& t, uint32_t domain, const Message& m, Named* out) {
  if (m.kind == Message::Kind::kRegistered) {
    if (m.registered != 0 && m.registered < Registry::kMaxStrings) out->ref = kRegisteredBit | m.registered;
    return;
  }
  const char* text = nullptr;
  uint32_t bytes = messageText(t, m, &text);
  if (bytes == 0) return;  // no name, or "": the empty name, id 0
  uint64_t h = NameCache::hash(text, bytes, static_cast<uint16_t>(domain));
  out->ref = t.names.find(h, text, bytes, static_cast<uint16_t>(domain));
  if (out->ref == 0) *out = Named{0, true, text, bytes, h};
}

bool Recorder::write(ThreadState& t, const Named& n, uint32_t keep, Record r) {
  uint32_t needed = 1 + (n.define ? 1 + textSlots(n.bytes) : 0);
  if (!enabled() || t.ring.freeSlots(needed + keep + t.reserved) < needed + keep + t.reserved) {
    bump(t.counters.dropped);
    return false;
  }
  uint32_t at = 0;
  r.name = n.ref;
  if (n.define) {
    // Only now that the definition will reach the ring may the cache remember it.
    r.name = t.names.insert(n.hash, n.text, n.bytes, r.domain);
    Record& d = t.ring.at(0);
    d = Record{};
    d.kind = RecordKind::kDefine;
    d.name = r.name;
    d.domain = r.domain;
    d.ext = n.bytes;
    t.ring.writeText(1, n.text, n.bytes);
    at = 1 + textSlots(n.bytes);
  }
  t.ring.at(at) = r;
  t.ring.publish(needed);
  return true;
}

int Recorder::push(uint32_t domain, const Message& m, Payload p) noexcept {
  int64_t now = EpochClock::nowNs();
  ThreadState* t = state();
  if (t == nullptr) return -1;
  if (domain >= Registry::kMaxDomains) {
    bump(t->counters.bad_handles);
    return -1;
  }
  DomainStack& ds = t->stacks[domain];
  uint32_t level = ds.depth++;
  if (level >= DomainStack::kMaxTrackedDepth) {
    bump(t->counters.depth_overflow);
    return static_cast<int>(level);
  }
  Named n;
  resolve(*t, domain, m, &n);
  Record r;
  r.ts_ns = now;
  r.payload = p.bits;
  r.domain = static_cast<uint16_t>(domain);
  r.kind = RecordKind::kPush;
  r.payload_type = p.type;
  // keep = 1: the slot of this push's own pop.
  bool recorded = write(*t, n, 1, r);
  ds.setRecorded(level, recorded);
  if (recorded) ++t->reserved;
  notify(*t, now);
  return static_cast<int>(level);
}

int Recorder::pop(uint32_t domain) noexcept {
  int64_t now = EpochClock::nowNs();
  ThreadState* t = state();
  if (t == nullptr) return -1;
  if (domain >= Registry::kMaxDomains) {
    bump(t->counters.bad_handles);
    return -1;
  }
  DomainStack& ds = t->stacks[domain];
  if (ds.depth == 0) {
    bump(t->counters.unmatched_pops);
    return -1;
  }
  uint32_t level = --ds.depth;
  notify(*t, now);
  if (!ds.isRecorded(level)) return static_cast<int>(level);  // its push was dropped or too deep
  ds.setRecorded(level, false);
  --t->reserved;
  // The push kept this slot free, so the pop always fits (the ring only gains space).
  Record& r = t->ring.at(0);
  r = Record{};
  r.ts_ns = now;
  r.domain = static_cast<uint16_t>(domain);
  r.kind = RecordKind::kPop;
  t->ring.publish(1);
  return static_cast<int>(level);
}

uint64_t Recorder::start(uint32_t domain, const Message& m, Payload p) noexcept {
  int64_t now = EpochClock::nowNs();
  ThreadState* t = state();
  if (t == nullptr) return kUnrecordedRange;
  uint64_t id = (uint64_t{t->index} + 1) << 40 | (++t->next_range & kRangeCounterMask);
  if (domain >= Registry::kMaxDomains) {
    bump(t->counters.bad_handles);
    return id | kUnrecordedRange;
  }
  Named n;
  resolve(*t, domain, m, &n);
  Record r;
  r.ts_ns = now;
  r.payload = p.bits;
  r.ext = id;
  r.domain = static_cast<uint16_t>(domain);
  r.kind = RecordKind::kStart;
  r.payload_type = p.type;
  bool recorded = write(*t, n, 0, r);
  notify(*t, now);
  return recorded ? id : id | kUnrecordedRange;
}

void Recorder::end(uint64_t id) noexcept {
  int64_t now = EpochClock::nowNs();
  if (id == 0 || (id & kUnrecordedRange)) return;
  ThreadState* t = state();
  if (t == nullptr) return;
  Record r;
  r.ts_ns = now;
  r.ext = id;
  r.kind = RecordKind::kEnd;
  write(*t, Named{}, 0, r);
  notify(*t, now);
}

void Recorder::mark(uint32_t domain, const Message& m, Payload p) noexcept {
  int64_t now = EpochClock::nowNs();
  ThreadState* t = state();
  if (t == nullptr) return;
  if (domain >= Registry::kMaxDomains) {
    bump(t->counters.bad_handles);
    return;
  }
  Named n;
  resolve(*t, domain, m, &n);
  Record r;
  r.ts_ns = now;
  r.payload = p.bits;
  r.domain = static_cast<uint16_t>(domain);
  r.kind = RecordKind::kMark;
  r.payload_type = p.type;
  write(*t, n, 0, r);
  notify(*t, now);
}

void Recorder::nameOsThread(uint32_t os_tid, const Message& m) noexcept {
  int64_t now = EpochClock::nowNs();
  ThreadState* t = state();
  if (t == nullptr) return;
  // Thread names are rare: the text always travels inline (no cache entry).
  const char* text = nullptr;
  uint32_t bytes = messageText(*t, m, &text);
  if (bytes == 0) return;
  uint32_t needed = 1 + textSlots(bytes);
  if (!enabled() || t->ring.freeSlots(needed + t->reserved) < needed + t->reserved) {
    bump(t->counters.dropped);
    return;
  }
  Record& r = t->ring.at(0);
  r = Record{};
  r.ts_ns = now;
  r.payload = os_tid;
  r.ext = bytes;
  r.kind = RecordKind::kThreadName;
  t->ring.writeText(1, text, bytes);
  t->ring.publish(needed);
}

}  // namespace argus::capture::nvtx
