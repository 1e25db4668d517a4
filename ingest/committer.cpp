// Committer (see committer.h).
#include "ingest/committer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace argus::ingest {

Committer::Committer(storage::Store& store, IngestMetrics& metrics, ByteBudget& budget, CommitterOptions options)
    : store_(store), metrics_(metrics), budget_(budget), options_(options), lanes_(static_cast<size_t>(std::max(1, options.threads))) {}

Committer::~Committer() { stop(); }

void Committer::start() {
  std::lock_guard lock(mu_);
  if (!threads_.empty() || stopped_) return;
  for (size_t i = 0; i < lanes_.size(); ++i) threads_.emplace_back([this, i] { run(i); });
}

void Committer::submit(CommitItem&& item) {
  budget_.charge(item.bytes);
  metrics_.inflight_bytes.fetch_add(static_cast<int64_t>(item.bytes), std::memory_order_relaxed);
  {
    std::lock_guard lock(mu_);
    if (!stopped_) {
      // A sink's batches always take the same lane (see committer.h).
      lanes_[std::hash<const CommitSink*>{}(item.sink.get()) % lanes_.size()].queue.push_back(std::move(item));
      work_cv_.notify_all();
      return;
    }
  }
  metrics_.inflight_bytes.fetch_sub(static_cast<int64_t>(item.bytes), std::memory_order_relaxed);
  item.sink->onCommitted(item.up_to, item.bytes, Status::unavailable("server shutting down"));
  budget_.release(item.bytes);
}

namespace {
// Head-entry buffers kept for reuse. Under load hundreds of batches are in flight (the
// global byte budget bounds them), and every one that finds the pool empty allocates afresh,
// so the pool holds about as many as fly; when traffic drops it keeps at most this many.
constexpr size_t kMaxPooledBuffers = 256;
// A buffer that holds more than this (arena and entry index, by capacity) is freed instead
// of pooled: one hostile or unusually large batch must not pin its memory.
constexpr size_t kMaxPooledBufferBytes = 4u << 20;

size_t recordCount(const CommitItem& item) { return item.records.size() + item.encoded.records; }

size_t retainedBytes(const HeadEntries& e) {
  return e.arena.capacity() + e.entries.capacity() * sizeof(HeadEntries::Entry) + e.summaries.capacity() * sizeof(model::StepSummary);
}

}  // namespace

HeadEntries Committer::takeEncodedBuffer() {
  HeadEntries e;
  {
    std::lock_guard lock(pool_mu_);
    if (!encoded_pool_.empty()) {
      e = std::move(encoded_pool_.back());
      encoded_pool_.pop_back();
    }
  }
  e.session = 0;
  e.arena.clear();
  e.entries.clear();
  e.summaries.clear();
  e.records = 0;
  return e;
}

bool Committer::idle() const {
  for (const Lane& lane : lanes_) {
    if (!lane.queue.empty() || lane.busy) return false;
  }
  return true;
}

void Committer::drain() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return idle() || stopped_; });
}

void Committer::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
  std::deque<CommitItem> late;
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    for (Lane& lane : lanes_) {
      for (CommitItem& item : lane.queue) late.push_back(std::move(item));
      lane.queue.clear();
    }
    idle_cv_.notify_all();
  }
  // Submitted after the thread's last look: never written, never acknowledged.
  for (auto& item : late) {
    metrics_.inflight_bytes.fetch_sub(static_cast<int64_t>(item.bytes), std::memory_order_relaxed);
    item.sink->onCommitted(item.up_to, item.bytes, Status::unavailable("server shutting down"));
    budget_.release(item.bytes);
  }
}

void Committer::run(size_t lane_index) {
  std::vector<CommitItem> group;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      Lane& lane = lanes_[lane_index];
      lane.busy = false;
      if (idle()) idle_cv_.notify_all();
      work_cv_.wait(lock, [&] { return !lane.queue.empty() || stopping_; });
      if (lane.queue.empty()) return;  // stopping and drained
      // Take everything queued in this lane, up to the group bounds.
      size_t records = 0, bytes = 0;
      std::deque<CommitItem>& q = lane.queue;
      while (!q.empty() && (group.empty() || (records + recordCount(q.front()) <= options_.max_group_records &&
                                              bytes + q.front().bytes <= options_.max_group_bytes))) {
        records += recordCount(q.front());
        bytes += q.front().bytes;
        group.push_back(std::move(q.front()));
        q.pop_front();
      }
      lane.busy = true;
    }
    commitGroup(group);
    group.clear();
  }
}

namespace {

storage::WriteRequest requestOf(const CommitItem& item) {
  storage::WriteRequest r;
  r.job = item.job;
  r.topology = item.topology ? &*item.topology : nullptr;
  r.kernels = item.kernels;
  r.stacks = item.stacks;
  r.strings = item.strings;
  r.records = item.records;
  return r;
}

}  // namespace

void Committer::notifyDurable(const CommitItem& item) const {
  if (!item.records.empty()) {
    thread_local std::vector<model::StepSummary> summaries;  // capacity reused
    summaries.clear();
    for (const model::StepRecord& r : item.records) summaries.push_back(model::summarize(r));
    options_.on_durable(item.job, summaries);
  } else if (!item.encoded.summaries.empty()) {
    options_.on_durable(item.job, item.encoded.summaries);
  }
}

void Committer::commitGroup(std::vector<CommitItem>& group) {
  std::vector<storage::WriteRequest> requests;
  requests.reserve(group.size());
  // Views of the sessions' head entries: the items stay put in `group` until this returns.
  // Per committer thread, reused (their capacity too).
  thread_local std::vector<std::vector<storage::EncodedEntry>> views;
  if (views.size() < group.size()) views.resize(group.size());
  for (size_t i = 0; i < group.size(); ++i) {
    const CommitItem& item = group[i];
    requests.push_back(requestOf(item));
    if (item.encoded.entries.empty()) continue;
    std::vector<storage::EncodedEntry>& v = views[i];
    v.clear();
    for (const HeadEntries::Entry& e : item.encoded.entries) {
      v.push_back({e.rank, e.block_base, item.encoded.session, e.first_seq, std::string_view(item.encoded.arena.data() + e.offset, e.size)});
    }
    requests.back().entries = v;
  }

  auto t0 = std::chrono::steady_clock::now();
  Status s = store_.writeGroup(requests);
  auto ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());

  std::vector<Status> outcomes(group.size(), s);
  if (!s.isOk()) {
    metrics_.commit_failures.fetch_add(1, std::memory_order_relaxed);
    std::fprintf(stderr, "argusd: group commit of %zu batches failed: %s\n", group.size(), s.toString().c_str());
    // A data-dependent refusal may come from one batch: isolate it.
    if (group.size() > 1 && (s.code() == Status::Code::kInvalidArgument || s.code() == Status::Code::kCorruption ||
                             s.code() == Status::Code::kNotFound)) {
      for (size_t i = 0; i < group.size(); ++i) outcomes[i] = store_.write(requests[i]);
    }
  } else {
    metrics_.commits.fetch_add(1, std::memory_order_relaxed);
    metrics_.observeCommitLatency(ns);
  }

  // This lane's groups are written one after another, so a sink hears of its batches in
  // submission order (an Ack never covers an earlier batch still being written).
  size_t released = 0;
  for (size_t i = 0; i < group.size(); ++i) {
    CommitItem& item = group[i];
    if (outcomes[i].isOk()) {
      metrics_.records.fetch_add(recordCount(item), std::memory_order_relaxed);
      metrics_.dictionary_entries.fetch_add(item.kernels.size() + item.stacks.size() + item.strings.size(),
                                            std::memory_order_relaxed);
      metrics_.commit_requests.fetch_add(1, std::memory_order_relaxed);
      if (options_.on_durable) notifyDurable(item);
    }
    item.sink->onCommitted(item.up_to, item.bytes, outcomes[i]);
    released += item.bytes;
  }
  for (CommitItem& item : group) {
    if (retainedBytes(item.encoded) > kMaxPooledBufferBytes) item.encoded = HeadEntries();  // freed, not pooled
  }
  {
    std::lock_guard lock(pool_mu_);
    for (CommitItem& item : group) {
      if (encoded_pool_.size() >= kMaxPooledBuffers) break;
      if (item.encoded.arena.capacity() > 0 || item.encoded.entries.capacity() > 0) encoded_pool_.push_back(std::move(item.encoded));
    }
  }
  metrics_.inflight_bytes.fetch_sub(static_cast<int64_t>(released), std::memory_order_relaxed);
  budget_.release(released);
}

}  // namespace argus::ingest
