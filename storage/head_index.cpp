#include "storage/head_index.h"

namespace argus::storage {

void HeadIndex::add(uint32_t job, uint32_t rank, uint64_t block_base, uint32_t entries) {
  std::lock_guard lock(mu_);
  jobs_[job][rank][block_base] += entries;
}

void HeadIndex::add(std::span<const Block> blocks) {
  std::lock_guard lock(mu_);
  for (const Block& b : blocks) ++jobs_[b.job][b.rank][b.block_base];
}

void HeadIndex::remove(uint32_t job, uint32_t rank, uint64_t block_base, uint32_t entries) {
  std::lock_guard lock(mu_);
  auto j = jobs_.find(job);
  if (j == jobs_.end()) return;
  auto r = j->second.find(rank);
  if (r == j->second.end()) return;
  auto b = r->second.find(block_base);
  if (b == r->second.end()) return;
  if (b->second > entries) {
    b->second -= entries;
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
      for (const auto& [base, entries] : blocks) out.push_back(Block{job, rank, base});
    }
  }
  return out;
}

}  // namespace argus::storage
