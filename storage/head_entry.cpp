#include "storage/head_entry.h"

#include <algorithm>
#include <utility>

#include "base/bytes.h"
#include "model/step_chain.h"

namespace argus::storage {

void beginHeadEntry(std::string* out) { out->push_back(static_cast<char>(kHeadEntryVersion)); }

void appendHeadRecord(std::string* out, uint64_t step, uint16_t attempt, std::string_view encoded, const StepsRow& row) {
  ByteWriter w(out);
  w.putVarint(step);
  w.putVarint(attempt);
  w.putString(encoded);
  w.putVarint(row.size());
  for (int64_t v : row) w.putSignedVarint(v);
}

Status HeadEntryReader::begin() {
  if (!r_.getU8(&version_).isOk()) return Status::corruption("empty value");
  if (version_ != 1 && version_ != kHeadEntryVersion) {
    return Status::corruption("entry version " + std::to_string(version_) + " (this build reads 1 and " + std::to_string(kHeadEntryVersion) + ")");
  }
  return Status::ok();
}

Status HeadEntryReader::next(Record* out) {
  uint64_t attempt = 0;
  ARGUS_RETURN_IF_ERROR(r_.getVarint(&out->step));
  ARGUS_RETURN_IF_ERROR(r_.getBoundedVarint(&attempt, UINT16_MAX, "attempt"));
  out->attempt = static_cast<uint16_t>(attempt);
  ARGUS_RETURN_IF_ERROR(r_.getString(&out->encoded, value_.size()));
  out->has_row = version_ >= 2;
  if (!out->has_row) return Status::ok();
  // Columns past the ones this build knows (a later build's) are read and dropped.
  uint64_t n = 0;
  ARGUS_RETURN_IF_ERROR(r_.getBoundedVarint(&n, value_.size(), "steps row columns"));
  if (n < kStepsRowColumns) {
    return Status::corruption("steps row of " + std::to_string(n) + " columns (this build reads " + std::to_string(kStepsRowColumns) + ")");
  }
  for (uint64_t i = 0; i < n; ++i) {
    int64_t v = 0;
    ARGUS_RETURN_IF_ERROR(r_.getSignedVarint(&v));
    if (i < kStepsRowColumns) out->row[i] = v;
  }
  return Status::ok();
}

HeadIndex::Entry headIndexEntry(const HeadKey& key, std::string_view value) {
  HeadIndex::Entry e{{key.job, key.rank, key.block_base}, key.session, key.first_seq, 0, UINT64_MAX, false};
  HeadEntryReader r(value);
  if (!r.begin().isOk() || r.atEnd()) return e;
  HeadEntryReader::Record rec;
  uint64_t min = UINT64_MAX, max = 0;
  bool keyframe = false;
  for (bool first = true; !r.atEnd(); first = false) {
    if (!r.next(&rec).isOk()) return e;
    if (first) keyframe = model::isKeyframe(rec.encoded);
    min = std::min(min, rec.step);
    max = std::max(max, rec.step);
  }
  e.min_step = min;
  e.max_step = max;
  e.starts_chain = keyframe;
  return e;
}

void HeadDecoder::clear() {
  kept_ = 0;
  rows_.clear();
  rows_sorted_ = true;
  decoded_ = 0;
  orphaned_ = 0;
  have_chain_ = false;
  dropDeferred();
  sorted_.clear();
}

Status HeadDecoder::add(const HeadKey& key, std::string_view value, uint64_t from_step, uint64_t to_step) {
  return read(key, value, from_step, to_step, false);
}

Status HeadDecoder::check(const HeadKey& key, std::string_view value) { return read(key, value, UINT64_MAX, 0, true); }

Status HeadDecoder::read(const HeadKey& key, std::string_view value, uint64_t from_step, uint64_t to_step, bool decode_all) {
  HeadEntryReader r(value);
  if (Status s = r.begin(); !s.isOk()) return corrupt(key, s.message());
  // A chain continues only into the next entry of its session and block (head keys sort
  // them together), and only when that entry starts right after it.
  bool continues = have_chain_ && chain_session_ == key.session && chain_block_ == key.block_base && chain_next_seq_ == key.first_seq;
  if (!continues) {
    decoder_.reset();
    have_chain_ = false;
    dropDeferred();
  }
  chain_session_ = key.session;
  chain_block_ = key.block_base;
  chain_next_seq_ = key.first_seq;
  HeadEntryReader::Record in;
  while (!r.atEnd()) {
    if (Status s = r.next(&in); !s.isOk()) return corrupt(key, s.message());
    ++chain_next_seq_;
    const bool keyframe = model::isKeyframe(in.encoded);
    if (!have_chain_ && !keyframe) {
      ++orphaned_;  // its chain's start was never written (see head_entry.h)
      continue;
    }
    have_chain_ = true;
    if (keyframe) dropDeferred();  // nothing later in the chain needs the records before it
    const bool in_range = in.step >= from_step && in.step < to_step;
    // A row that came with its record is all a steps read needs of it; the record is still
    // deferred, as a later record of its chain without a row needs it decoded.
    const bool row_only = keeps_ == Keeps::kStepsRows && in.has_row && !decode_all;
    if (row_only && in_range) keepRow(in.step, in.attempt, in.row);
    if ((!in_range || row_only) && !decode_all) {
      defer(key, in);
      continue;
    }
    for (const Deferred& d : deferred_) {
      ARGUS_RETURN_IF_ERROR(decode(d.key, {d.step, d.attempt, std::string_view(deferred_bytes_).substr(d.offset, d.size)}, false));
    }
    dropDeferred();
    ARGUS_RETURN_IF_ERROR(decode(key, in, in_range));
  }
  sorted_.clear();
  return Status::ok();
}

void HeadDecoder::defer(const HeadKey& key, const HeadEntryReader::Record& in) {
  deferred_.push_back({key, in.step, in.attempt, deferred_bytes_.size(), in.encoded.size()});
  deferred_bytes_.append(in.encoded);
}

void HeadDecoder::dropDeferred() {
  deferred_.clear();
  deferred_bytes_.clear();
}

Status HeadDecoder::decode(const HeadKey& key, const HeadEntryReader::Record& in, bool keep) {
  if (kept_ == records_.size()) records_.emplace_back();
  model::StepRecord& rec = records_[kept_];
  if (Status s = decoder_.decode(in.encoded, &rec); !s.isOk()) {
    have_chain_ = false;
    return corrupt(key, "record of step " + std::to_string(in.step) + ": " + s.message());
  }
  ++decoded_;
  if (rec.step != in.step || rec.attempt != in.attempt || rec.rank != key.rank || rec.step - rec.step % block_steps_ != key.block_base) {
    have_chain_ = false;
    return corrupt(key, "record says rank " + std::to_string(rec.rank) + " step " + std::to_string(rec.step) + " attempt " +
                            std::to_string(rec.attempt) + ", its entry rank " + std::to_string(key.rank) + " step " + std::to_string(in.step) +
                            " attempt " + std::to_string(in.attempt) + " in block " + std::to_string(key.block_base));
  }
  if (in.has_row && stepsRowOf(rec) != in.row) {
    have_chain_ = false;
    return corrupt(key, "the steps row stored with the record of step " + std::to_string(in.step) + " is not the record's");
  }
  if (!keep) return Status::ok();
  if (keeps_ == Keeps::kStepsRows) {
    keepRow(rec.step, rec.attempt, stepsRowOf(rec));
  } else {
    ++kept_;
  }
  return Status::ok();
}

void HeadDecoder::keepRow(uint64_t step, uint16_t attempt, const StepsRow& row) {
  if (!rows_.empty() && (rows_.back().step > step || (rows_.back().step == step && rows_.back().attempt >= attempt))) rows_sorted_ = false;
  rows_.push_back({step, attempt, row});
}

Status HeadDecoder::corrupt(const HeadKey& key, const std::string& what) {
  return Status::corruption(describeKey(kHeadCf, encodeHeadKey(key)) + ": " + what);
}

namespace {

// Sorts by (step, attempt), keeping the last of each: stable, so among duplicates the later
// delivery (later key) stays last and wins.
template <typename T, typename StepOf>
void sortKeepingLast(std::vector<T>* v, StepOf at) {
  auto before = [&](const T& a, const T& b) { return at(a) < at(b); };
  std::stable_sort(v->begin(), v->end(), before);
  size_t out = 0;
  for (size_t i = 0; i < v->size(); ++i) {
    const bool dup_of_next = i + 1 < v->size() && at((*v)[i + 1]) == at((*v)[i]);
    if (!dup_of_next) (*v)[out++] = std::move((*v)[i]);
  }
  v->resize(out);
}

}  // namespace

std::vector<model::StepRecord*>& HeadDecoder::sorted() {
  if (sorted_.empty() && kept_ > 0) {
    for (size_t i = 0; i < kept_; ++i) sorted_.push_back(&records_[i]);
    sortKeepingLast(&sorted_, [](const model::StepRecord* r) { return std::pair(r->step, r->attempt); });
  }
  return sorted_;
}

const std::vector<HeadDecoder::StepsRowAt>& HeadDecoder::sortedRows() {
  // Rows kept in ascending order without repeats (one session, in order) are sorted already.
  if (!rows_sorted_) sortKeepingLast(&rows_, [](const StepsRowAt& r) { return std::pair(r.step, r.attempt); });
  rows_sorted_ = true;
  return rows_;
}

}  // namespace argus::storage
