#include "storage/head_index.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace argus::storage {

void HeadIndex::add(uint32_t job, uint32_t rank, uint64_t block_base, uint32_t entries) {
  std::lock_guard lock(mu_);
  BlockState& b = jobs_[job][rank][block_base];
  b.entries += entries;
  b.ordered = false;
  b.starts = {};
}

void HeadIndex::add(std::span<const Entry> entries) {
  std::lock_guard lock(mu_);
  for (const Entry& e : entries) addEntry(jobs_[e.block.job][e.block.rank][e.block.block_base], e);
}

void HeadIndex::addEntry(BlockState& b, const Entry& e) {
  const bool first = b.entries++ == 0;
  if (!b.ordered) return;
  const bool after = first || (std::pair(e.session, e.first_seq) > std::pair(b.last.session, b.last.first_seq) && e.min_step > b.max_step);
  if (!after) {
    b.ordered = false;
    b.starts = {};  // its memory too
    return;
  }
  b.last = {e.session, e.first_seq};
  b.max_step = std::max(b.max_step, e.max_step);
  if (e.starts_chain && (b.starts.empty() || e.min_step >= b.starts.back().min_step + kStartSteps)) b.starts.push_back({e.min_step, b.last});
}

void HeadIndex::remove(uint32_t job, uint32_t rank, uint64_t block_base, uint32_t entries) {
  std::lock_guard lock(mu_);
  auto j = jobs_.find(job);
  if (j == jobs_.end()) return;
  auto r = j->second.find(rank);
  if (r == j->second.end()) return;
  auto b = r->second.find(block_base);
  if (b == r->second.end()) return;
  if (b->second.entries > entries) {
    b->second.entries -= entries;
    return;
  }
  r->second.erase(b);
  if (!r->second.empty()) return;
  j->second.erase(r);
  if (j->second.empty()) jobs_.erase(j);
}

void HeadIndex::dropJob(uint32_t job) {
  std::lock_guard lock(mu_);
  jobs_.erase(job);
}

std::vector<uint32_t> HeadIndex::ranks(uint32_t job, uint64_t from_step, uint64_t to_step, uint32_t block_steps) const {
  std::vector<uint32_t> out;
  if (from_step >= to_step) return out;
  const uint64_t first_base = from_step - from_step % block_steps;
  std::lock_guard lock(mu_);
  auto j = jobs_.find(job);
  if (j == jobs_.end()) return out;
  for (const auto& [rank, blocks] : j->second) {
    auto b = blocks.lower_bound(first_base);
    if (b != blocks.end() && b->first < to_step) out.push_back(rank);
  }
  return out;
}

std::optional<HeadIndex::Start> HeadIndex::startFor(uint32_t job, uint32_t rank, uint64_t block_base, uint64_t step) const {
  std::lock_guard lock(mu_);
  auto j = jobs_.find(job);
  if (j == jobs_.end()) return std::nullopt;
  auto r = j->second.find(rank);
  if (r == j->second.end()) return std::nullopt;
  auto b = r->second.find(block_base);
  if (b == r->second.end() || !b->second.ordered) return std::nullopt;
  const std::vector<ChainStart>& starts = b->second.starts;
  auto after = std::upper_bound(starts.begin(), starts.end(), step, [](uint64_t s, const ChainStart& c) { return s < c.min_step; });
  if (after == starts.begin()) return std::nullopt;
  return std::prev(after)->at;
}

std::optional<uint64_t> HeadIndex::lastBlock(uint32_t job) const {
  std::optional<uint64_t> last;
  std::lock_guard lock(mu_);
  auto j = jobs_.find(job);
  if (j == jobs_.end()) return last;
  for (const auto& [rank, blocks] : j->second) {
    if (!blocks.empty() && (!last || blocks.rbegin()->first > *last)) last = blocks.rbegin()->first;
  }
  return last;
}

std::vector<HeadIndex::Block> HeadIndex::blocks() const {
  std::vector<Block> out;
  std::lock_guard lock(mu_);
  for (const auto& [job, ranks] : jobs_) {
    for (const auto& [rank, blocks] : ranks) {
      for (const auto& [base, state] : blocks) out.push_back(Block{job, rank, base});
    }
  }
  return out;
}

}  // namespace argus::storage
