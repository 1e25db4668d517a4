#include "storage/head_entry.h"

#include <algorithm>
#include <utility>

#include "base/bytes.h"
#include "model/step_chain.h"

namespace argus::storage {

void beginHeadEntry(std::string* out) { out->push_back(static_cast<char>(kHeadEntryVersion)); }

void appendHeadRecord(std::string* out, std::string_view encoded, const model::StepRecord& rec) {
  ByteWriter w(out);
  w.putVarint(rec.step);
  w.putVarint(rec.attempt);
  w.putString(encoded);
  putLightPart(rec, out);
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
  out->has_light = version_ >= 2;
  if (!out->has_light) return Status::ok();
  return getLightPart(r_, out->light);
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

HeadDecoder::HeadDecoder(uint32_t block_steps, std::optional<Table> rows_of)
    : block_steps_(block_steps), light_ix_(rows_of ? lightIndex(*rows_of) : -1), row_width_(rows_of ? lightColumns(*rows_of) : 0) {}

void HeadDecoder::clear() {
  kept_ = 0;
  rows_.clear();
  values_.clear();
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
    // Checked here, not only once decoded: light rows are kept by the step their header names.
    if (in.step - in.step % block_steps_ != key.block_base) {
      have_chain_ = false;
      return corrupt(key, "a record of step " + std::to_string(in.step) + " in block " + std::to_string(key.block_base));
    }
    ++chain_next_seq_;
    const bool keyframe = model::isKeyframe(in.encoded);
    if (!have_chain_ && !keyframe) {
      ++orphaned_;  // its chain's start was never written (see head_entry.h)
      continue;
    }
    have_chain_ = true;
    if (keyframe) dropDeferred();  // nothing later in the chain needs the records before it
    const bool in_range = in.step >= from_step && in.step < to_step;
    // Light rows that came with the record are all a read of their table needs of it; the
    // record is still deferred: a later record of its chain without them needs it decoded.
    const bool row_only = light_ix_ >= 0 && in.has_light && !decode_all;
    if (row_only && in_range) {
      if (Status s = keepRows(in.step, in.attempt, in.light[light_ix_]); !s.isOk()) return corrupt(key, s.message());
    }
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
  if (rec.step != in.step || rec.attempt != in.attempt || rec.rank != key.rank) {  // the block: read() checked in.step
    have_chain_ = false;
    return corrupt(key, "record says rank " + std::to_string(rec.rank) + " step " + std::to_string(rec.step) + " attempt " +
                            std::to_string(rec.attempt) + ", its entry rank " + std::to_string(key.rank) + " step " + std::to_string(in.step) +
                            " attempt " + std::to_string(in.attempt) + " in block " + std::to_string(key.block_base));
  }
  if (in.has_light) ARGUS_RETURN_IF_ERROR(checkLight(key, in, rec));
  if (!keep) return Status::ok();
  if (light_ix_ >= 0) {
    keepRows(rec);
  } else {
    ++kept_;
  }
  return Status::ok();
}

Status HeadDecoder::checkLight(const HeadKey& key, const HeadEntryReader::Record& in, const model::StepRecord& rec) {
  for (size_t i = 0; i < kLightTableCount; ++i) {
    const Table t = kLightTables[i];
    stored_.clear();
    computed_.clear();
    if (Status s = in.light[i].read(lightColumns(t), &stored_); !s.isOk()) {
      have_chain_ = false;
      return corrupt(key, s.message());
    }
    if (lightRowsOf(t, rec, &computed_) != in.light[i].rows || computed_ != stored_) {
      have_chain_ = false;
      return corrupt(key, std::string("the ") + tableName(t) + " rows stored with the record of step " + std::to_string(in.step) + " are not the record's");
    }
  }
  return Status::ok();
}

Status HeadDecoder::keepRows(uint64_t step, uint16_t attempt, const LightSection& section) {
  const size_t offset = values_.size();
  if (Status s = section.read(row_width_, &values_); !s.isOk()) {
    values_.resize(offset);
    return s;
  }
  noteKept(step, attempt, offset);
  return Status::ok();
}

void HeadDecoder::keepRows(const model::StepRecord& rec) {
  const size_t offset = values_.size();
  lightRowsOf(kLightTables[light_ix_], rec, &values_);
  noteKept(rec.step, rec.attempt, offset);
}

void HeadDecoder::noteKept(uint64_t step, uint16_t attempt, size_t offset) {
  if (!rows_.empty() && (rows_.back().step > step || (rows_.back().step == step && rows_.back().attempt >= attempt))) rows_sorted_ = false;
  rows_.push_back({step, attempt, (values_.size() - offset) / row_width_, offset});
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

const std::vector<HeadDecoder::RowsAt>& HeadDecoder::sortedRows() {
  // Rows kept in ascending order without repeats (one session, in order) are sorted already.
  if (!rows_sorted_) sortKeepingLast(&rows_, [](const RowsAt& r) { return std::pair(r.step, r.attempt); });
  rows_sorted_ = true;
  return rows_;
}

}  // namespace argus::storage
