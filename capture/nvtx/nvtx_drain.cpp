#include "capture/nvtx/nvtx_drain.h"

#include <algorithm>
#include <queue>

namespace argus::capture::nvtx {

Drain::Drain(Recorder& recorder, NameTable& names, DrainOptions options)
    : recorder_(recorder),
      names_(names),
      options_(std::move(options)),
      pending_(std::max<size_t>(2, options_.max_pending_ranges)),
      text_(Registry::kMaxTextBytes) {
  // Threads forget their name caches first, then what is buffered goes: any record that
  // still names an old cache slot after this is counted in unknown_names.
  recorder_.newGeneration();
  for (ThreadState* s = recorder_.threads(); s != nullptr; s = s->next) {
    if (threads_.size() <= s->index) threads_.resize(s->index + 1);
    readThread(*s, threads_[s->index], /*discard=*/true);
  }
}

std::span<const TraceEvent> Drain::drain() {
  out_.clear();
  merging_.clear();
  for (ThreadState* s = recorder_.threads(); s != nullptr; s = s->next) {
    if (threads_.size() <= s->index) threads_.resize(s->index + 1);
    PerThread& pt = threads_[s->index];
    pt.items.clear();
    pt.cursor = 0;
    readThread(*s, pt, /*discard=*/false);
    if (!pt.items.empty()) merging_.push_back(s->index);
  }
  merge();
  stats_.events += out_.size();
  return out_;
}

void Drain::readThread(ThreadState& s, PerThread& pt, bool discard) {
  // Status before head: a retired thread published its last record before kRetired.
  uint8_t status = s.status.load(std::memory_order_acquire);
  if (status == ThreadState::kFree) return;
  RecordRing& ring = s.ring;
  uint64_t head = ring.head();
  uint64_t pos = ring.tail();
  if (pt.slot_names.empty()) pt.slot_names.assign(NameCache::kSlots + 1, 0);
  while (pos < head) {
    const Record& r = ring.slot(pos);
    uint64_t text_slots =
        (r.kind == RecordKind::kDefine || r.kind == RecordKind::kThreadName) ? textSlots(static_cast<uint32_t>(r.ext)) : 0;
    if (r.ext > Registry::kMaxTextBytes && text_slots != 0) {
      // BUG: a writer never makes such a record; stop reading this ring rather than misparse it.
      pos = head;
      break;
    }
    ++stats_.records;
    if (!discard) convert(s, pt, r, pos);
    pos += 1 + text_slots;
  }
  ring.release(pos);
  if (status == ThreadState::kRetired) {
    // The thread is gone and its ring is empty: forget it and let a new thread reuse the state.
    stats_.open_at_exit += pt.open.size();
    pt.open.clear();
    pt.default_depth = 0;  // the assembler keeps them open (a push without its pop)
    std::fill(pt.slot_names.begin(), pt.slot_names.end(), 0);
    s.status.store(ThreadState::kFree, std::memory_order_release);
  }
}

uint64_t Drain::payloadId(const Record& r) {
  Payload p{r.payload_type, r.payload};
  return p.isInteger() ? static_cast<uint64_t>(p.integer()) : 0;
}

void Drain::convert(const ThreadState& s, PerThread& pt, const Record& r, uint64_t pos) {
  auto event = [&](EventType type, int64_t start, int64_t end, uint32_t name, uint64_t id) {
    TraceEvent e;
    e.type = type;
    e.start_ns = start;
    e.end_ns = end;
    e.thread = s.tid;
    e.name = name;
    e.id = id;
    return e;
  };
  switch (r.kind) {
    case RecordKind::kDefine: {
      uint32_t bytes = static_cast<uint32_t>(r.ext);
      s.ring.readText(pos + 1, text_.data(), bytes);
      if (r.name >= 1 && r.name <= NameCache::kSlots) pt.slot_names[r.name] = composeName(r.domain, std::string_view(text_.data(), bytes));
      return;
    }
    case RecordKind::kThreadName: {
      uint32_t bytes = static_cast<uint32_t>(r.ext);
      s.ring.readText(pos + 1, text_.data(), bytes);
      thread_names_[static_cast<uint32_t>(r.payload)].assign(text_.data(), bytes);
      return;
    }
    case RecordKind::kPush: {
      uint32_t name = numberedStep(nameOf(pt, r), r);
      if (r.domain == 0) {
        ++pt.default_depth;
        pt.items.push_back({r.ts_ns, Item::kEvent, 0, event(EventType::kRangeBegin, r.ts_ns, r.ts_ns, name, payloadId(r))});
      } else {
        pt.open.push_back({r.domain, name, r.ts_ns, payloadId(r)});
      }
      return;
    }
    case RecordKind::kPop: {
      if (r.domain == 0) {
        // Recorded pops always have a recorded push; only one discarded at attach is missing.
        if (pt.default_depth == 0) {
          ++stats_.pops_before_drain;
          return;
        }
        --pt.default_depth;
        pt.items.push_back({r.ts_ns, Item::kEvent, 0, event(EventType::kRangeEnd, r.ts_ns, r.ts_ns, 0, 0)});
        return;
      }
      // The innermost open push of the same domain (usually the last one).
      for (size_t i = pt.open.size(); i-- > 0;) {
        if (pt.open[i].domain != r.domain) continue;
        const OpenPush o = pt.open[i];
        pt.open.erase(pt.open.begin() + static_cast<ptrdiff_t>(i));
        pt.items.push_back({r.ts_ns, Item::kEvent, 0, event(EventType::kRange, o.begin, std::max(o.begin, r.ts_ns), o.name, o.payload)});
        return;
      }
      ++stats_.pops_before_drain;  // its push came before this Drain attached
      return;
    }
    case RecordKind::kStart: {
      uint32_t name = numberedStep(nameOf(pt, r), r);
      pt.items.push_back({r.ts_ns, Item::kStart, r.ext, event(EventType::kRange, r.ts_ns, r.ts_ns, name, payloadId(r))});
      return;
    }
    case RecordKind::kEnd: {
      TraceEvent e;
      e.end_ns = r.ts_ns;
      pt.items.push_back({r.ts_ns, Item::kEnd, r.ext, e});
      return;
    }
    case RecordKind::kMark: {
      uint32_t name = numberedStep(nameOf(pt, r), r);
      pt.items.push_back({r.ts_ns, Item::kEvent, 0, event(EventType::kMark, r.ts_ns, r.ts_ns, name, payloadId(r))});
      return;
    }
  }
}

uint32_t Drain::nameOf(PerThread& pt, const Record& r) {
  if (r.name == 0) return 0;
  if (r.name & kRegisteredBit) {
    uint32_t id = r.name & ~kRegisteredBit;
    uint64_t key = uint64_t{r.domain} << 32 | id;
    auto it = registered_names_.find(key);
    if (it != registered_names_.end()) return it->second;
    Registry::Registered reg = recorder_.registry().string(id);
    if (!reg.known) {
      ++stats_.unknown_names;
      return 0;
    }
    uint32_t name = composeName(r.domain, reg.text);
    registered_names_.emplace(key, name);
    return name;
  }
  uint32_t name = r.name <= NameCache::kSlots ? pt.slot_names[r.name] : 0;
  if (name == 0) ++stats_.unknown_names;
  return name;
}

uint32_t Drain::composeName(uint32_t domain, std::string_view text) {
  std::string_view d = recorder_.registry().domainName(domain);
  if (d.empty() || (text.size() > d.size() && text.substr(0, d.size()) == d && text[d.size()] == ':')) return names_.intern(text);
  scratch_.assign(d);
  scratch_ += ':';
  scratch_.append(text);
  return names_.intern(scratch_);
}

uint32_t Drain::numberedStep(uint32_t name, const Record& r) {
  Payload p{r.payload_type, r.payload};
  if (name == 0 || !options_.step_from_payload || !p.isInteger() || p.integer() < 0) return name;
  if (marker_kind_.size() <= name) marker_kind_.resize(name + 1, 0);
  if (marker_kind_[name] == 0) {
    std::optional<int64_t> step = options_.rules.stepMarker(names_.text(name));
    marker_kind_[name] = step.has_value() && *step == -1 ? 1 : 2;
  }
  if (marker_kind_[name] != 1) return name;
  scratch_.assign(names_.text(name));
  if (scratch_.back() != '#') scratch_ += '#';
  scratch_ += std::to_string(p.integer());
  return names_.intern(scratch_);
}

void Drain::merge() {
  auto take = [&](Item& it) {
    switch (it.op) {
      case Item::kEvent:
        out_.push_back(it.event);
        break;
      case Item::kStart:
        onStart(it);
        break;
      case Item::kEnd:
        onEnd(it);
        break;
    }
  };
  if (merging_.size() == 1) {
    for (Item& it : threads_[merging_[0]].items) take(it);
  } else if (!merging_.empty()) {
    // k-way merge by key; ties keep thread order (the heap holds (key, thread index)).
    using Head = std::pair<int64_t, uint32_t>;
    std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
    for (uint32_t t : merging_) heap.push({threads_[t].items.front().key, t});
    while (!heap.empty()) {
      uint32_t t = heap.top().second;
      heap.pop();
      PerThread& pt = threads_[t];
      take(pt.items[pt.cursor++]);
      if (pt.cursor < pt.items.size()) heap.push({pt.items[pt.cursor].key, t});
    }
  }
}

void Drain::onStart(const Item& it) {
  PendingRanges::Entry* p = pending_.find(it.range);
  if (p != nullptr && p->has_end) {
    TraceEvent e = it.event;
    e.end_ns = std::max(e.start_ns, p->end_ns);
    out_.push_back(e);
    pending_.erase(p);
    return;
  }
  if (p == nullptr) p = &pending_.insert(it.range, &stats_.unended_ranges, &stats_.unstarted_ends);
  p->has_start = true;
  p->start_ns = it.event.start_ns;
  p->payload = it.event.id;
  p->name = it.event.name;
  p->thread = it.event.thread;
}

void Drain::onEnd(const Item& it) {
  PendingRanges::Entry* p = pending_.find(it.range);
  if (p != nullptr && p->has_start) {
    TraceEvent e;
    e.type = EventType::kRange;
    e.start_ns = p->start_ns;
    e.end_ns = std::max(p->start_ns, it.event.end_ns);
    e.id = p->payload;
    e.name = p->name;
    e.thread = p->thread;
    out_.push_back(e);
    pending_.erase(p);
    return;
  }
  // The start is in a ring not read yet (another thread), or was never recorded.
  if (p == nullptr) p = &pending_.insert(it.range, &stats_.unended_ranges, &stats_.unstarted_ends);
  p->has_end = true;
  p->end_ns = it.event.end_ns;
}

NvtxStats Drain::stats() const {
  NvtxStats s = stats_;
  for (ThreadState* t = recorder_.threads(); t != nullptr; t = t->next) {
    ++s.threads;
    s.dropped += t->counters.dropped.load(std::memory_order_relaxed);
    s.depth_overflow += t->counters.depth_overflow.load(std::memory_order_relaxed);
    s.unmatched_pops += t->counters.unmatched_pops.load(std::memory_order_relaxed);
    s.bad_handles += t->counters.bad_handles.load(std::memory_order_relaxed);
    s.truncated_names += t->counters.truncated.load(std::memory_order_relaxed);
  }
  s.domains_refused = recorder_.registry().domainsRefused();
  s.strings_refused = recorder_.registry().stringsRefused();
  return s;
}

}  // namespace argus::capture::nvtx
