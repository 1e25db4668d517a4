// Committer (see committer.h).
#include "ingest/committer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace argus::ingest {

Committer::Committer(storage::Store& store, IngestMetrics& metrics, ByteBudget& budget, CommitterOptions options)
    : store_(store), metrics_(metrics), budget_(budget), options_(options) {}

Committer::~Committer() { stop(); }

void Committer::start() {
  std::lock_guard lock(mu_);
  if (!threads_.empty() || stopped_) return;
  for (int i = 0; i < std::max(1, options_.threads); ++i) threads_.emplace_back([this] { run(); });
}

void Committer::submit(CommitItem&& item) {
  budget_.charge(item.bytes);
  metrics_.inflight_bytes.fetch_add(static_cast<int64_t>(item.bytes), std::memory_order_relaxed);
  {
    std::lock_guard lock(mu_);
    if (!stopped_) {
      queue_.push_back(std::move(item));
      work_cv_.notify_one();
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

size_t retainedBytes(const HeadEntries& e) { return e.arena.capacity() + e.entries.capacity() * sizeof(HeadEntries::Entry); }

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
  e.records = 0;
  return e;
}

void Committer::drain() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return (queue_.empty() && busy_ == 0) || stopped_; });
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
    late.swap(queue_);
    idle_cv_.notify_all();
  }
  // Submitted after the thread's last look: never written, never acknowledged.
  for (auto& item : late) {
    metrics_.inflight_bytes.fetch_sub(static_cast<int64_t>(item.bytes), std::memory_order_relaxed);
    item.sink->onCommitted(item.up_to, item.bytes, Status::unavailable("server shutting down"));
    budget_.release(item.bytes);
  }
}

void Committer::run() {
  std::vector<CommitItem> group;
  bool was_busy = false;
  for (;;) {
    uint64_t ticket = 0;
    {
      std::unique_lock lock(mu_);
      if (was_busy) --busy_;
      was_busy = false;
      if (queue_.empty() && busy_ == 0) idle_cv_.notify_all();
      work_cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping and drained
      // Take everything queued, up to the group bounds.
      size_t records = 0, bytes = 0;
      while (!queue_.empty() && (group.empty() || (records + recordCount(queue_.front()) <= options_.max_group_records &&
                                                   bytes + queue_.front().bytes <= options_.max_group_bytes))) {
        records += recordCount(queue_.front());
        bytes += queue_.front().bytes;
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      ++busy_;
      was_busy = true;
      ticket = next_ticket_++;
    }
    commitGroup(group, ticket);
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

void Committer::commitGroup(std::vector<CommitItem>& group, uint64_t ticket) {
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

  // Groups taken earlier report first: a sink must never hear of a later batch before an
  // earlier one (its Ack would cover records that are not durable yet).
  std::unique_lock order(report_mu_);
  report_cv_.wait(order, [&] { return reported_ == ticket; });
  size_t released = 0;
  for (size_t i = 0; i < group.size(); ++i) {
    CommitItem& item = group[i];
    if (outcomes[i].isOk()) {
      metrics_.records.fetch_add(recordCount(item), std::memory_order_relaxed);
      metrics_.dictionary_entries.fetch_add(item.kernels.size() + item.stacks.size() + item.strings.size(),
                                            std::memory_order_relaxed);
      metrics_.commit_requests.fetch_add(1, std::memory_order_relaxed);
    }
    item.sink->onCommitted(item.up_to, item.bytes, outcomes[i]);
    released += item.bytes;
  }
  ++reported_;
  order.unlock();
  report_cv_.notify_all();
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
