#include "storage/head_entry.h"

#include <algorithm>

#include "base/bytes.h"
#include "model/step_chain.h"

namespace argus::storage {

void beginHeadEntry(std::string* out) { out->push_back(static_cast<char>(kHeadEntryVersion)); }

void appendHeadRecord(std::string* out, uint64_t step, uint16_t attempt, std::string_view encoded) {
  ByteWriter w(out);
  w.putVarint(step);
  w.putVarint(attempt);
  w.putString(encoded);
}

Status HeadEntryReader::begin() {
  uint8_t version = 0;
  if (!r_.getU8(&version).isOk()) return Status::corruption("empty value");
  if (version != kHeadEntryVersion) {
    return Status::corruption("entry version " + std::to_string(version) + " (this build reads " + std::to_string(kHeadEntryVersion) + ")");
  }
  return Status::ok();
}

Status HeadEntryReader::next(Record* out) {
  uint64_t attempt = 0;
  ARGUS_RETURN_IF_ERROR(r_.getVarint(&out->step));
  ARGUS_RETURN_IF_ERROR(r_.getBoundedVarint(&attempt, UINT16_MAX, "attempt"));
  out->attempt = static_cast<uint16_t>(attempt);
  return r_.getString(&out->encoded, value_.size());
}

void HeadDecoder::clear() {
  kept_ = 0;
  decoded_ = 0;
  orphaned_ = 0;
  have_chain_ = false;
  sorted_.clear();
}

Status HeadDecoder::add(const HeadKey& key, std::string_view value, uint64_t from_step, uint64_t to_step) {
  auto corrupt = [&](const std::string& what) { return Status::corruption(describeKey(kHeadCf, encodeHeadKey(key)) + ": " + what); };
  HeadEntryReader r(value);
  if (Status s = r.begin(); !s.isOk()) return corrupt(s.message());
  // A chain continues only into the next entry of its session and block (head keys sort
  // them together), and only when that entry starts right after it.
  bool continues = have_chain_ && chain_session_ == key.session && chain_block_ == key.block_base && chain_next_seq_ == key.first_seq;
  if (!continues) {
    decoder_.reset();
    have_chain_ = false;
  }
  chain_session_ = key.session;
  chain_block_ = key.block_base;
  chain_next_seq_ = key.first_seq;
  HeadEntryReader::Record in;
  while (!r.atEnd()) {
    Status s = r.next(&in);
    if (!s.isOk()) return corrupt(s.message());
    const uint64_t step = in.step;
    const uint16_t attempt = in.attempt;
    const std::string_view encoded = in.encoded;
    ++chain_next_seq_;
    if (!have_chain_ && !model::isKeyframe(encoded)) {
      ++orphaned_;  // its chain's start was never written (see head_entry.h)
      continue;
    }
    if (kept_ == records_.size()) records_.emplace_back();
    model::StepRecord& rec = records_[kept_];
    s = decoder_.decode(encoded, &rec);
    if (!s.isOk()) {
      have_chain_ = false;
      return corrupt("record of step " + std::to_string(step) + ": " + s.message());
    }
    ++decoded_;
    have_chain_ = true;
    if (rec.step != step || rec.attempt != attempt || rec.rank != key.rank || rec.step - rec.step % block_steps_ != key.block_base) {
      have_chain_ = false;
      return corrupt("record says rank " + std::to_string(rec.rank) + " step " + std::to_string(rec.step) + " attempt " +
                     std::to_string(rec.attempt) + ", its entry rank " + std::to_string(key.rank) + " step " + std::to_string(step) +
                     " attempt " + std::to_string(attempt) + " in block " + std::to_string(key.block_base));
    }
    if (step >= from_step && step < to_step) ++kept_;
  }
  sorted_.clear();
  return Status::ok();
}

std::vector<model::StepRecord*>& HeadDecoder::sorted() {
  if (sorted_.empty() && kept_ > 0) {
    for (size_t i = 0; i < kept_; ++i) sorted_.push_back(&records_[i]);
    // Stable: among duplicates the later delivery (later key) stays last and wins.
    std::stable_sort(sorted_.begin(), sorted_.end(), [](const model::StepRecord* a, const model::StepRecord* b) {
      return a->step != b->step ? a->step < b->step : a->attempt < b->attempt;
    });
    size_t out = 0;
    for (size_t i = 0; i < sorted_.size(); ++i) {
      bool dup_of_next = i + 1 < sorted_.size() && sorted_[i + 1]->step == sorted_[i]->step && sorted_[i + 1]->attempt == sorted_[i]->attempt;
      if (!dup_of_next) sorted_[out++] = sorted_[i];
    }
    sorted_.resize(out);
  }
  return sorted_;
}

}  // namespace argus::storage
