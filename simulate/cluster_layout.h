// ClusterLayout: where each rank of a simulated job sits: its tensor-, pipeline- and
// data-parallel coordinates and its host. Ranks are numbered as Megatron-LM numbers them by
// default (tensor-parallel fastest, pipeline slowest):
//
//   rank = tp_rank + tp * (dp_rank + dp * pp_rank),   host = rank / gpus_per_host
//
// so a tensor-parallel group shares a host (when tp <= gpus_per_host), a pipeline stage is a
// contiguous run of tp * dp ranks, and consecutive data-parallel ranks sit on neighbouring
// hosts. Hosts are named "node-00042".
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "model/step_record.h"

namespace argus::simulate {

struct ClusterLayout {
  uint32_t tp = 1, pp = 1, dp = 1;
  uint32_t gpus_per_host = 8;

  // The most ranks a layout may hold: the yardstick is 16,384; room above it.
  static constexpr uint64_t kMaxRanks = 1u << 20;

  // InvalidArgument naming the bad size: zero sizes, more than kMaxRanks ranks, or hosts
  // that tensor-parallel groups would straddle unevenly.
  Status validate() const;

  uint32_t ranks() const { return tp * pp * dp; }
  uint32_t hosts() const { return (ranks() + gpus_per_host - 1) / gpus_per_host; }
  uint32_t rankOf(uint32_t tp_rank, uint32_t pp_rank, uint32_t dp_rank) const { return tp_rank + tp * (dp_rank + dp * pp_rank); }
  uint32_t tpRank(uint32_t rank) const { return rank % tp; }
  uint32_t dpRank(uint32_t rank) const { return (rank / tp) % dp; }
  uint32_t ppRank(uint32_t rank) const { return rank / (tp * dp); }
  uint32_t hostOf(uint32_t rank) const { return rank / gpus_per_host; }
  static std::string hostName(uint32_t host);
  model::RankTopology topology(uint32_t rank) const;
};

}  // namespace argus::simulate
