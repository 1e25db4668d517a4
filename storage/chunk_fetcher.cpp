#include "storage/chunk_fetcher.h"

namespace argus::storage {
namespace {

// The part of a chunk key before the rank: job | table | column | step_base.
constexpr size_t kRangePrefixSize = 4 + 1 + 1 + 8;
static_assert(kRangePrefixSize + 4 + 2 == kChunkKeySize);

std::string_view view(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

}  // namespace

ChunkFetcher::ChunkFetcher(const DbHandles& h, const rocksdb::Snapshot* snapshot) : h_(h) {
  ro_.snapshot = snapshot;
}

ChunkFetcher::~ChunkFetcher() = default;

ChunkFetcher::Cursor* ChunkFetcher::cursorFor(std::string_view key) {
  std::string_view range = key.substr(0, kRangePrefixSize);
  if (last_ && last_->range == range) return last_;
  for (auto& c : cursors_) {
    if (c->range == range) return last_ = c.get();
  }
  if (cursors_.size() >= kMaxCursors) return nullptr;
  auto c = std::make_unique<Cursor>();
  c->range = std::string(range);
  c->upper = prefixSuccessor(c->range);
  rocksdb::ReadOptions ro = ro_;
  if (!c->upper.empty()) {
    c->upper_slice = rocksdb::Slice(c->upper);
    ro.iterate_upper_bound = &c->upper_slice;  // the iterator never reads past its block range
  }
  c->it.reset(h_.db->NewIterator(ro, h_.chunk));
  cursors_.push_back(std::move(c));
  return last_ = cursors_.back().get();
}

Status ChunkFetcher::pointGet(const std::string& key, std::string* buffer, std::string_view* value) {
  rocksdb::Status s = h_.db->Get(ro_, h_.chunk, key, buffer);
  if (s.IsNotFound()) return Status::notFound(describeKey(kChunkCf, key));
  ARGUS_RETURN_IF_ERROR(fromRocks(s, "scan: reading chunk"));
  *value = *buffer;
  return Status::ok();
}

Status ChunkFetcher::get(const std::string& key, std::string* buffer, std::string_view* value) {
  if (key.size() != kChunkKeySize) return pointGet(key, buffer, value);
  Cursor* c = cursorFor(key);
  if (c == nullptr) return pointGet(key, buffer, value);
  rocksdb::Iterator* it = c->it.get();
  const std::string_view want(key);
  bool positioned = false;
  if (it->Valid() && view(it->key()) <= want) {
    // Entries between the iterator and the key are ones the scan does not want: step over a
    // few, then seek. Every entry stepped over is < want, so landing past it means absent.
    for (int i = 0; i <= kMaxSteps && it->Valid() && view(it->key()) < want; ++i) it->Next();
    positioned = !it->Valid() || view(it->key()) >= want;
    if (!it->Valid()) ARGUS_RETURN_IF_ERROR(fromRocks(it->status(), "scan: reading chunks"));
  }
  if (!positioned) {
    it->Seek(key);
    ARGUS_RETURN_IF_ERROR(fromRocks(it->status(), "scan: reading chunks"));
  }
  if (!it->Valid() || view(it->key()) != want) return Status::notFound(describeKey(kChunkCf, key));
  // In place: the iterator keeps its entry (and the block holding it) until it moves, and
  // copying it out was a tenth of a short scan's time.
  *value = view(it->value());
  return Status::ok();
}

}  // namespace argus::storage
