#include "import/chrome_sax.h"

#include <xxhash.h>

#include <algorithm>
#include <optional>

namespace argus::import {

namespace {

// Rank of `key` in an args-key list, -1 when absent.
int indexIn(const std::vector<std::string>& list, const std::string& key) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == key) return static_cast<int>(i);
  }
  return -1;
}

// Fills *value from `v` when `key` ranks before the key that filled it (lists are short).
// Returns false when the key is one of the list's but the value is no non-negative integer.
bool takeArg(const std::vector<std::string>& list, const std::string& key, const JsonScalar& v, uint64_t* value, int* found_rank) {
  int rank = indexIn(list, key);
  if (rank < 0 || (*found_rank >= 0 && rank >= *found_rank)) return true;
  std::optional<uint64_t> n = v.asUnsigned();
  if (!n) return false;
  *value = *n;
  *found_rank = rank;
  return true;
}

}  // namespace

void ChromeSax::Scratch::reset() {
  meta_name.clear(), group.clear();
  step = kNoArg, microbatch = kNoArg, bytes = 0, peer = kNoArg;
  step_rank = microbatch_rank = bytes_rank = peer_rank = group_rank = -1;
  bad_args = false;
}

void ChromeSax::argsValue(const std::string& key, const JsonScalar& v) {
  if (key == "name" && v.asString()) ev_.meta_name.assign(*v.text);  // "M" events' args.name
  if (!takeArg(mapping_.step_args, key, v, &ev_.step, &ev_.step_rank)) ev_.bad_args = true;
  if (!takeArg(mapping_.microbatch_args, key, v, &ev_.microbatch, &ev_.microbatch_rank)) ev_.bad_args = true;
  takeArg(mapping_.bytes_args, key, v, &ev_.bytes, &ev_.bytes_rank);
  takeArg(mapping_.peer_args, key, v, &ev_.peer, &ev_.peer_rank);
  int group = indexIn(mapping_.group_args, key);
  if (group >= 0 && (ev_.group_rank < 0 || group < ev_.group_rank)) {
    // "pg": 3 and "pg": "3" name the same group.
    if (const std::string* s = v.asString()) {
      ev_.group.assign(*s);
    } else if (auto n = v.asUnsigned()) {
      ev_.group = std::to_string(*n);
    } else {
      return;
    }
    ev_.group_rank = group;
  }
}

uint32_t ChromeSax::trackOf() {
  const EventHead& ev = head();
  if (ev.pid == last_pid_ && ev.tid == last_tid_ && !tracks_.empty()) return last_track_;
  auto [it, inserted] = track_index_.try_emplace({ev.pid, ev.tid}, static_cast<uint32_t>(tracks_.size()));
  if (inserted) tracks_.push_back({ev.pid, ev.tid, ev.pid_text, ev.tid_text});
  last_pid_ = ev.pid, last_tid_ = ev.tid, last_track_ = it->second;
  return it->second;
}

uint32_t ChromeSax::internName() {
  uint32_t id = trace_->names.intern(head().name);
  if (id >= kinds_.size()) {
    // Ids are dense: classify every name the table gave since the last growth.
    size_t from = kinds_.size();
    kinds_.resize(trace_->names.size());
    for (size_t i = from; i < kinds_.size(); ++i) kinds_[i] = mapping_.classify(trace_->names.text(static_cast<uint32_t>(i)));
  }
  return id;
}

void ChromeSax::endEvent() {
  ChromeCounts& counts = trace_->counts;
  const EventHead& ev = head();
  ++counts.trace_events;
  if (ev.ph == "M") {
    if (ev_.meta_name.empty()) return;
    if (ev.name == "process_name") {
      process_names_[ev.pid] = ev_.meta_name;
      ++counts.metadata;
    } else if (ev.name == "thread_name") {
      thread_names_[{ev.pid, ev.tid}] = ev_.meta_name;
      ++counts.metadata;
    }
    return;
  }
  if (ev.ph != "X") {
    ++counts.not_read;
    return;
  }
  ChromeOp op;
  if (!ev.ts_ns || !ev.dur_ns || *ev.dur_ns < 0 || __builtin_add_overflow(*ev.ts_ns, *ev.dur_ns, &op.end_ns)) {
    ++counts.skipped;
    return;
  }
  ++counts.complete;
  op.start_ns = *ev.ts_ns;
  op.name = internName();
  if (kinds_[op.name].cls == OpClass::kIgnore) {
    ++counts.ignored;
    return;
  }
  if (ev_.bad_args) ++counts.bad_args;
  op.step = ev_.step;
  op.microbatch = ev_.microbatch;
  if (op.step == kNoArg) {
    ++counts.without_step;
    if (first_without_step_byte_ == kNoArg) {
      first_without_step_byte_ = ev.begin;
      first_without_step_name_ = ev.name;
    }
  }
  op.bytes = ev_.bytes;
  op.group = ev_.group.empty() ? 0 : XXH3_64bits(ev_.group.data(), ev_.group.size());
  op.peer = ev_.peer < UINT32_MAX ? static_cast<uint32_t>(ev_.peer) : UINT32_MAX;
  op.track = trackOf();
  op.event_bytes = static_cast<uint32_t>(std::min<uint64_t>(position() - ev.begin, UINT32_MAX));
  ops_.push_back(op);
}

}  // namespace argus::import
