#include "storage/scan_cursor.h"

#include <algorithm>

#include "base/consecutive_runs.h"
#include "base/worker_threads.h"
#include "model/step_codec.h"
#include "storage/chunk_reader.h"
#include "storage/keys.h"

namespace argus::storage {
namespace {

bool startsWith(const rocksdb::Slice& s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::string_view(s.data(), prefix.size()) == prefix;
}

std::string_view view(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

}  // namespace

RocksScanCursor::RocksScanCursor(const DbHandles& h, uint32_t job, ScanSpec spec, std::vector<const ColumnDef*> columns)
    : h_(h), job_(job), spec_(std::move(spec)), columns_(std::move(columns)),
      head_(h.block_steps, lightIndex(spec_.table) >= 0 ? std::optional(spec_.table) : std::nullopt) {
  if (spec_.batch_rows == 0) spec_.batch_rows = 4096;
  std::sort(spec_.ranks.begin(), spec_.ranks.end());
  spec_.ranks.erase(std::unique(spec_.ranks.begin(), spec_.ranks.end()), spec_.ranks.end());
  for (const ColumnDef* c : columns_) {
    if (c->id >= kFirstStoredColumnId && std::find(stored_ids_.begin(), stored_ids_.end(), c->id) == stored_ids_.end()) {
      stored_ids_.push_back(c->id);
    }
    Column col;
    col.name = std::string(c->name);
    col.type = c->type;
    pending_.columns.push_back(std::move(col));
  }
  // The lowest id: which sets a scan lists must not depend on the order columns were named in.
  // A column added later is missing from older blocks: their _steps keys list them instead.
  lead_column_ = kStepsColumnId;
  for (const ColumnDef* c : columns_) {
    if (isNestedTable(spec_.table) || c->id < kFirstStoredColumnId || c->added_later) continue;
    lead_column_ = std::min(lead_column_, c->id);  // kStepsColumnId is above every schema id
  }
}

RocksScanCursor::~RocksScanCursor() {
  // Iterators under the snapshot first: the plan's (pinning lead values) and the fetcher's.
  plan_.reset();
  chunks_.reset();
  head_it_.reset();
  if (snapshot_ && owns_snapshot_) h_.db->ReleaseSnapshot(snapshot_);
}

std::unique_ptr<RocksScanCursor> RocksScanCursor::worker() const {
  auto w = std::make_unique<RocksScanCursor>(h_, job_, spec_, columns_);
  w->snapshot_ = snapshot_;
  w->owns_snapshot_ = false;
  w->ro_.snapshot = snapshot_;
  w->chunks_ = std::make_unique<ChunkFetcher>(h_, snapshot_);
  w->plan_ = plan_;
  w->stats_.plan_bytes = stats_.plan_bytes;
  w->last_rank_ix_ = 0;  // nothing until setRanks
  return w;
}

uint64_t RocksScanCursor::stepsPerRank() const {
  if (rankCount() == 0) return 1;
  const uint64_t blocks = (plan_->sets.size() + rankCount() - 1) / rankCount();
  return std::clamp<uint64_t>(std::min(spec_.to_step - spec_.from_step, blocks * h_.block_steps), 1, UINT32_MAX);
}

void RocksScanCursor::setRanks(size_t first, size_t last) {
  rank_ix_ = first;
  last_rank_ix_ = std::min(last, rankCount());
  rank_started_ = false;
  head_.clear();
  head_rows_ = nullptr;
  head_light_rows_ = nullptr;
  pending_.clear();
}

bool RocksScanCursor::wantRank(uint32_t rank) const {
  return spec_.ranks.empty() || std::binary_search(spec_.ranks.begin(), spec_.ranks.end(), rank);
}

Status RocksScanCursor::init(size_t threads) {
  // The head index before the snapshot: every head entry the snapshot holds is then listed
  // (storage/head_index.h).
  std::vector<uint32_t> head_ranks = h_.head_index->ranks(job_, spec_.from_step, spec_.to_step, h_.block_steps);
  snapshot_ = h_.db->GetSnapshot();
  ro_.snapshot = snapshot_;
  chunks_ = std::make_unique<ChunkFetcher>(h_, snapshot_);
  if (spec_.from_step >= spec_.to_step) return Status::ok();
  auto plan = std::make_shared<ScanPlan>();
  std::vector<Listed> listed;
  ARGUS_RETURN_IF_ERROR(discoverChunkSets(threads, &listed, plan.get()));
  std::erase_if(head_ranks, [this](uint32_t r) { return !wantRank(r); });
  std::sort(head_ranks.begin(), head_ranks.end());
  head_ranks.erase(std::unique(head_ranks.begin(), head_ranks.end()), head_ranks.end());
  plan->sets.reserve(listed.size());
  for (size_t i = 0, h = 0; i < listed.size() || h < head_ranks.size();) {
    RankPlan rp;
    rp.rank = i == listed.size() ? head_ranks[h] : h == head_ranks.size() ? listed[i].rank : std::min(listed[i].rank, head_ranks[h]);
    rp.first_set = static_cast<uint32_t>(plan->sets.size());
    for (; i < listed.size() && listed[i].rank == rp.rank; ++i) plan->sets.push_back(listed[i].set);
    rp.set_count = static_cast<uint32_t>(plan->sets.size() - rp.first_set);
    rp.in_head = h < head_ranks.size() && head_ranks[h] == rp.rank;
    h += rp.in_head;
    plan->ranks.push_back(rp);
  }
  stats_.plan_bytes = plan->ranks.capacity() * sizeof(RankPlan) + plan->sets.capacity() * sizeof(ChunkSet);
  for (const LeadValues& l : plan->leads) stats_.plan_bytes += l.bytes;
  plan_ = std::move(plan);
  last_rank_ix_ = plan_->ranks.size();
  return Status::ok();
}

Status RocksScanCursor::discoverChunkSets(size_t threads, std::vector<Listed>* out, ScanPlan* plan) {
  if (!spec_.ranks.empty()) {  // few ranks wanted: seek to each instead of reading every rank's keys
    plan->leads.emplace_back();
    size_t keep_bytes = spec_.plan_bytes;
    std::atomic<size_t> sets_left{maxListedSets()};
    // A run of consecutive ranks (a pushed-down rank range) is listed as one range: a seek
    // per block for the run, not per rank of it.
    Status listed;
    forConsecutiveRuns(spec_.ranks, [&](uint32_t first, uint32_t last) {
      if (listed.isOk()) listed = listRanks(first, uint64_t{last} + 1, &sets_left, &keep_bytes, out, &plan->leads[0]);
    });
    ARGUS_RETURN_IF_ERROR(listed);
    if (!std::is_sorted(out->begin(), out->end(), byRank)) std::stable_sort(out->begin(), out->end(), byRank);
    return Status::ok();
  }
  // Every rank: in ranges of ranks on several threads when there are many. The last block's
  // highest rank sets the ranges; the last range runs to the end, so any rank above it in
  // another block is listed too.
  const std::string end = prefixSuccessor(chunkPrefix(job_, spec_.table, lead_column_, h_.blockBase(spec_.to_step - 1)));
  uint64_t ranks = 0;
  if (threads > 1 && !end.empty()) {
    std::unique_ptr<rocksdb::Iterator> it(h_.db->NewIterator(ro_, h_.chunk));
    it->SeekForPrev(end);
    ChunkKey k;
    if (it->Valid() && decodeChunkKey(view(it->key()), &k) && k.job == job_ && k.table == spec_.table && k.column == lead_column_) {
      ranks = uint64_t{k.rank} + 1;
    }
    ARGUS_RETURN_IF_ERROR(fromRocks(it->status(), "scan: listing chunks"));
  }
  const size_t parts = std::clamp<size_t>(ranks / kRanksPerListingThread, 1, std::max<size_t>(threads, 1));
  constexpr uint64_t kAllRanks = uint64_t{1} << 32;
  std::atomic<size_t> sets_left{maxListedSets()};
  if (parts == 1) {
    size_t keep_bytes = spec_.plan_bytes;
    return listRanks(0, kAllRanks, &sets_left, &keep_bytes, out, &plan->leads.emplace_back());
  }
  // What each thread writes per set, on a cache line of its own: when the threads' byte
  // budgets and list ends shared lines, a 2-thread listing took ~60% more CPU than one.
  struct alignas(64) Part {
    std::vector<Listed> listed;
    LeadValues leads;
    size_t keep_bytes;
    Status status;
  };
  std::vector<Part> part(parts);
  auto work = [&](size_t i) {
    part[i].keep_bytes = spec_.plan_bytes / parts;
    part[i].status = listRanks(static_cast<uint32_t>(ranks * i / parts), i + 1 == parts ? kAllRanks : ranks * (i + 1) / parts, &sets_left,
                               &part[i].keep_bytes, &part[i].listed, &part[i].leads);
  };
  runOnThreads(parts, work);
  size_t total = out->size();
  for (const Part& p : part) total += p.listed.size();
  out->reserve(total);
  for (Part& p : part) {
    plan->leads.push_back(std::move(p.leads));
    ARGUS_RETURN_IF_ERROR(p.status);
    out->insert(out->end(), p.listed.begin(), p.listed.end());
  }
  return Status::ok();
}

size_t RocksScanCursor::maxListedSets() const {
  // While init() builds the plan, the listing and the plan's copy of it are both held.
  return spec_.max_plan_bytes / (sizeof(Listed) + sizeof(ChunkSet));
}

Status RocksScanCursor::listRanks(uint32_t lo, uint64_t hi, std::atomic<size_t>* sets_left, size_t* keep_bytes, std::vector<Listed>* out,
                                  LeadValues* leads) const {
  size_t quota = 0;  // sets taken from *sets_left and not listed yet
  struct GiveBack {  // what this thread took and did not list, for the others
    std::atomic<size_t>* left;
    const size_t& quota;
    ~GiveBack() { left->fetch_add(quota, std::memory_order_relaxed); }
  } give_back{sets_left, quota};
  auto takeQuota = [&] {
    size_t left = sets_left->load(std::memory_order_relaxed);
    do {
      quota = std::min(left, kListingQuota);
    } while (quota > 0 && !sets_left->compare_exchange_weak(left, left - quota, std::memory_order_relaxed));
    return quota > 0;
  };
  std::vector<size_t> runs;  // where each block's sets begin in *out (each run by rank)
  const uint64_t last_base = h_.blockBase(spec_.to_step - 1);
  const std::string end = prefixSuccessor(chunkPrefix(job_, spec_.table, lead_column_, last_base));
  // Values are kept by pinning their blocks while *keep_bytes lasts; from the first that does
  // not fit, the listing goes on with an iterator that pins nothing.
  rocksdb::ReadOptions pinned_ro = ro_;
  pinned_ro.pin_data = *keep_bytes > 0;
  bool pinning = pinned_ro.pin_data;
  size_t pinned_values = 0;  // kept through `it`
  std::unique_ptr<rocksdb::Iterator> it(h_.db->NewIterator(pinned_ro, h_.chunk));
  // Whatever the exit: a pinning iterator that kept values joins the plan (one that kept
  // nothing pins nothing of use).
  struct KeepPinned {
    std::unique_ptr<rocksdb::Iterator>& it;
    const bool& pinning;
    const size_t& values;
    LeadValues* leads;
    ~KeepPinned() {
      if (pinning && values > 0) leads->pinning.push_back(std::move(it));
    }
  } keep_pinned{it, pinning, pinned_values, leads};
  auto stopPinning = [&] {
    const std::string key(view(it->key()));
    if (pinned_values > 0) leads->pinning.push_back(std::move(it));
    it.reset(h_.db->NewIterator(ro_, h_.chunk));
    it->Seek(key);
    pinning = false;
  };
  ChunkKey k;
  // Decodes the key at it into k; false at the end of the range. The keys in it are those of
  // its job, table and lead column up to its last block: compared as fields, not as bytes
  // against `end` (a memcmp per key listed).
  auto at = [&](Status* error) {
    if (!it->Valid()) return false;
    const std::string_view key = view(it->key());
    if (decodeChunkKey(key, &k)) return k.job == job_ && k.table == spec_.table && k.column == lead_column_ && k.step_base <= last_base;
    if (end.empty() || key < std::string_view(end)) *error = Status::corruption("malformed chunk key " + describeKey(kChunkCf, key));
    return false;
  };
  Status error;
  uint64_t base = h_.blockBase(spec_.from_step);
  for (;;) {
    it->Seek(chunkPrefix(job_, spec_.table, lead_column_, base, lo));
    if (!at(&error)) break;
    if (k.step_base != base) {  // no rank from lo on in this block: the next block present
      base = k.step_base;
      if (k.rank < lo) continue;
    }
    bool more = true;
    runs.push_back(out->size());
    while (more && k.step_base == base && k.rank < hi) {
      if (quota == 0 && !takeQuota()) {
        return Status::resourceExhausted("scan: the chunk sets in the step range pass the plan's bound of " + std::to_string(spec_.max_plan_bytes) +
                                         " bytes: narrow the steps or the ranks");
      }
      const rocksdb::Slice v = it->value();
      const bool keep = pinning && v.size() > 0 && v.size() <= UINT32_MAX && v.size() <= *keep_bytes;
      if (keep) {
        *keep_bytes -= v.size();
        leads->bytes += v.size();
        ++pinned_values;
      }
      out->push_back(Listed{k.rank, ChunkSet{k.step_base, k.attempt, keep ? static_cast<uint32_t>(v.size()) : 0, keep ? v.data() : nullptr}});
      if (pinning && !keep) stopPinning();  // positioned at the same key
      --quota;
      it->Next();
      more = at(&error);
    }
    if (!error.isOk() || base >= last_base) break;
    base += 1;  // the next Seek lands on the next block present
  }
  ARGUS_RETURN_IF_ERROR(error);
  ARGUS_RETURN_IF_ERROR(fromRocks(it->status(), "scan: listing chunks"));
  // Listed by (base, rank, attempt): by rank, each rank's sets keep their (base, attempt)
  // order. Each block's run is in rank order already, so merging the runs in pairs is the
  // stable sort (a full one cost ~3% of a short scan over many ranks). Here, on the listing
  // thread: the ranges of ranks ascend, so the lists of several threads joined are in order.
  runs.push_back(out->size());
  for (size_t width = 1; width + 1 < runs.size(); width *= 2) {
    for (size_t r = 0; r + width + 1 < runs.size(); r += 2 * width) {
      auto start = [&](size_t run) { return out->begin() + static_cast<std::ptrdiff_t>(runs[std::min(run, runs.size() - 1)]); };
      std::inplace_merge(start(r), start(r + width), start(r + 2 * width), byRank);
    }
  }
  return Status::ok();
}

Status RocksScanCursor::loadHeadRows(const RankPlan& plan) {
  head_.clear();
  head_rows_ = &head_.sorted();
  head_light_rows_ = &head_.sortedRows();
  // Sealed ranks have no head entries, only the tombstones sealing left: a seek there would
  // walk every later rank's tombstones too (quadratic in ranks until compaction drops them).
  if (!plan.in_head) return Status::ok();
  std::string prefix = headPrefix(job_, plan.rank);
  // One iterator for every rank, its bound moved to the rank's end (tombstones or not)
  // before each seek: RocksDB checks the bound again at every Seek, and creating and
  // destroying an iterator per rank cost as much as a seek.
  head_bound_ = prefixSuccessor(prefix);
  if (head_bound_.empty()) head_bound_.assign(kHeadKeySize + 1, '\xff');  // the last job's last rank: past its every key
  head_upper_ = rocksdb::Slice(head_bound_);
  if (!head_it_) {
    rocksdb::ReadOptions ro = ro_;
    ro.iterate_upper_bound = &head_upper_;
    head_it_.reset(h_.db->NewIterator(ro, h_.head));
  }
  rocksdb::Iterator* it = head_it_.get();
  // From the chain start before from_step where the index knows one, else from the block's
  // beginning (head_index.h).
  const uint64_t first_base = h_.blockBase(spec_.from_step);
  HeadKey k{job_, plan.rank, first_base, 0, 0};
  if (std::optional<HeadIndex::Start> start = h_.head_index->startFor(job_, plan.rank, first_base, spec_.from_step)) {
    k.session = start->session;
    k.first_seq = start->first_seq;
  }
  char seek[kHeadKeySize];
  encodeHeadKeyTo(k, seek);
  for (it->Seek(rocksdb::Slice(seek, sizeof seek)); it->Valid() && startsWith(it->key(), prefix); it->Next()) {
    if (!decodeHeadKey(view(it->key()), &k)) return Status::corruption("malformed head key " + describeKey(kHeadCf, view(it->key())));
    if (k.block_base >= spec_.to_step) break;
    ++stats_.head_entries_read;
    ARGUS_RETURN_IF_ERROR(head_.add(k, view(it->value()), spec_.from_step, spec_.to_step));
  }
  ARGUS_RETURN_IF_ERROR(fromRocks(it->status(), "scan: reading head entries"));
  head_rows_ = &head_.sorted();
  head_light_rows_ = &head_.sortedRows();
  stats_.head_rows_read += head_rows_->size() + head_light_rows_->size();
  return Status::ok();
}

RocksScanCursor::Source& RocksScanCursor::takeSource() {
  if (sources_.size() == source_pool_.size()) source_pool_.push_back(std::make_unique<Source>());
  sources_.push_back(source_pool_[sources_.size()].get());
  return *sources_.back();
}

Status RocksScanCursor::emitBlock(const RankPlan& plan, uint64_t base, size_t* set_ix) {
  std::vector<Source*>& sources = sources_;
  sources.clear();
  ChunkGetter get = [this](const std::string& key, std::string* buffer, std::string_view* value) { return chunks_->get(key, buffer, value); };
  const std::span<const ChunkSet> sets = setsOf(plan);
  for (; *set_ix < sets.size() && sets[*set_ix].base == base; ++*set_ix) {
    const ChunkSet& cs = sets[*set_ix];
    const ChunkKey at{job_, spec_.table, lead_column_, base, plan.rank, cs.attempt};
    encodeChunkKey(at, &lead_key_);
    std::string_view value(cs.lead, cs.lead_len);
    if (cs.lead_len == 0) ARGUS_RETURN_IF_ERROR(chunks_->get(lead_key_, &lead_buffer_, &value));
    ChunkReader::KnownChunk lead{lead_column_, {}};
    ARGUS_RETURN_IF_ERROR(ChunkReader::verify(lead_key_, value, &lead.view));
    const ChunkStats& st = lead.view.stats;
    if (st.rows == 0 || st.last_step < spec_.from_step || st.first_step >= spec_.to_step) {
      // The chunks a read would have decoded: _steps is one of them only when it leads (a
      // stored lead's block takes its steps from that header unless it has gaps).
      const bool steps_read = lead_column_ == kStepsColumnId;
      stats_.chunks_skipped += (steps_read ? 1 : 0) + (isNestedTable(spec_.table) ? 1 : 0) + stored_ids_.size();
      continue;
    }
    Source& src = takeSource();
    src.attempt = cs.attempt;
    src.head = false;
    ARGUS_RETURN_IF_ERROR(ChunkReader::readBlock(at, &stored_ids_, get, &src.block, &stats_.chunks_read, &lead, spec_.from_step, spec_.to_step));
    if (isNestedTable(spec_.table)) src.block.rowOffsets(&src.offsets);
  }
  // Head records (or light rows) of this block, one source per attempt (they are in
  // (step, attempt) order).
  std::map<uint16_t, size_t> head_source;
  auto headBlock = [&](uint16_t attempt) -> TableBlock& {
    auto [it, fresh] = head_source.try_emplace(attempt, sources.size());
    if (fresh) {
      Source& src = takeSource();
      src.attempt = attempt;
      src.head = true;
      src.block.reset(spec_.table);
    }
    return sources[it->second]->block;
  };
  for (model::StepRecord* rec : *head_rows_) {
    if (h_.blockBase(rec->step) == base) headBlock(rec->attempt).append(std::move(*rec));  // each feeds one block, once
  }
  for (const HeadDecoder::RowsAt& r : *head_light_rows_) {
    if (h_.blockBase(r.step) == base) headBlock(r.attempt).appendLightRows(r.step, r.rows, head_.valuesOf(r));
  }
  for (Source* src : sources) {
    if (src->head && isNestedTable(spec_.table)) src->block.rowOffsets(&src->offsets);
  }

  if (sources.size() == 1) {
    // One source (the usual case: a sealed block, no replay): its steps ascend without
    // repeats, so the rows in range are one run, copied column by column.
    const auto [first, last] = sources[0]->block.stepsIn(spec_.from_step, spec_.to_step);
    appendRun(plan.rank, *sources[0], first, last);
    return Status::ok();
  }

  // Winner per step: highest attempt; head before chunk for the same attempt.
  struct Cand {
    uint64_t step;
    uint16_t attempt;
    bool head;
    uint32_t source;
    uint32_t index;
  };
  std::vector<Cand> cands;
  for (size_t s = 0; s < sources.size(); ++s) {
    const auto& steps = sources[s]->block.steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      uint64_t step = static_cast<uint64_t>(steps[i]);
      if (step < spec_.from_step || step >= spec_.to_step) continue;
      cands.push_back(Cand{step, sources[s]->attempt, sources[s]->head, static_cast<uint32_t>(s), static_cast<uint32_t>(i)});
    }
  }
  std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
    if (a.step != b.step) return a.step < b.step;
    if (a.attempt != b.attempt) return a.attempt > b.attempt;
    return a.head > b.head;
  });
  for (size_t c = 0; c < cands.size(); ++c) {
    if (c > 0 && cands[c].step == cands[c - 1].step) continue;
    appendRun(plan.rank, *sources[cands[c].source], cands[c].index, cands[c].index + 1);
  }
  return Status::ok();
}

void RocksScanCursor::appendRun(uint32_t rank, Source& src, size_t first, size_t last) {
  size_t lo = src.rowOf(first), hi = src.rowOf(last);
  size_t n = hi - lo;
  if (n == 0) return;
  for (size_t o = 0; o < columns_.size(); ++o) {
    Column& out = pending_.columns[o];
    uint8_t id = columns_[o]->id;
    if (id == 0) {
      out.ints.insert(out.ints.end(), n, static_cast<int64_t>(rank));
    } else if (id == 1 && !isNestedTable(spec_.table)) {
      // One row per step (the steps table): the step column is the steps themselves.
      out.ints.insert(out.ints.end(), src.block.steps.begin() + first, src.block.steps.begin() + last);
    } else if (id == 1) {
      for (size_t i = first; i < last; ++i) out.ints.insert(out.ints.end(), src.offsets[i + 1] - src.offsets[i], src.block.steps[i]);
    } else if (id == 2) {
      out.ints.insert(out.ints.end(), n, static_cast<int64_t>(src.attempt));
    } else if (out.type == ColumnType::kHistogram) {
      // Each (source, step) is emitted once: its histograms can move.
      auto& h = src.block.columns[id].hists;
      out.hists.takeFrom(h, lo, hi);
    } else {
      const auto& v = src.block.columns[id].ints;
      out.ints.insert(out.ints.end(), v.begin() + lo, v.begin() + hi);
    }
  }
  pending_.rows += n;
}

Status RocksScanCursor::next(ColumnBatch* batch, bool* has_rows) {
  while (pending_.rows < spec_.batch_rows && rank_ix_ < last_rank_ix_) {
    const RankPlan& plan = plan_->ranks[rank_ix_];
    if (!rank_started_) {
      ARGUS_RETURN_IF_ERROR(loadHeadRows(plan));
      blocks_.clear();
      for (const ChunkSet& s : setsOf(plan)) blocks_.push_back(s.base);
      for (const model::StepRecord* r : *head_rows_) blocks_.push_back(h_.blockBase(r->step));
      for (const HeadDecoder::RowsAt& r : *head_light_rows_) blocks_.push_back(h_.blockBase(r.step));
      std::sort(blocks_.begin(), blocks_.end());
      blocks_.erase(std::unique(blocks_.begin(), blocks_.end()), blocks_.end());
      block_ix_ = 0;
      set_ix_ = 0;
      rank_started_ = true;
    }
    if (block_ix_ >= blocks_.size()) {
      ++rank_ix_;
      rank_started_ = false;
      head_.clear();
      head_rows_ = nullptr;
      head_light_rows_ = nullptr;
      continue;
    }
    ARGUS_RETURN_IF_ERROR(emitBlock(plan, blocks_[block_ix_], &set_ix_));
    ++block_ix_;
  }

  const size_t avail = pending_.rows;
  const size_t n = std::min(avail, spec_.batch_rows);
  *has_rows = n > 0;
  // The pending buffers are handed over whole; rows past a batch (less than the last block
  // added) come back into pending_. Copying a batch out instead cost a copy of every row.
  std::swap(*batch, pending_);
  pending_.columns.resize(batch->columns.size());
  for (size_t o = 0; o < batch->columns.size(); ++o) {
    Column& out = batch->columns[o];
    Column& rest = pending_.columns[o];
    rest.name = out.name;
    rest.type = out.type;
    rest.ints.clear();
    rest.hists.clear();
    if (n == avail) continue;
    if (out.type == ColumnType::kHistogram) {
      rest.hists.takeFrom(out.hists, n, out.hists.size());
      out.hists.resize(n);
    } else {
      rest.ints.assign(out.ints.begin() + static_cast<ptrdiff_t>(n), out.ints.end());
      out.ints.resize(n);
    }
  }
  batch->rows = n;
  pending_.rows = avail - n;
  return Status::ok();
}

}  // namespace argus::storage
