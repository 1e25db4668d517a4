#include "simulate/cluster_layout.h"

#include <cstdio>

namespace argus::simulate {

Status ClusterLayout::validate() const {
  if (tp == 0 || pp == 0 || dp == 0 || gpus_per_host == 0) return Status::invalidArgument("layout: tp, pp, dp and gpus per host must be at least 1");
  const uint64_t n = static_cast<uint64_t>(tp) * pp * dp;
  if (n > kMaxRanks) return Status::invalidArgument("layout: " + std::to_string(n) + " ranks, more than " + std::to_string(kMaxRanks));
  if (tp > gpus_per_host ? tp % gpus_per_host != 0 : gpus_per_host % tp != 0) {
    return Status::invalidArgument("layout: tp " + std::to_string(tp) + " and " + std::to_string(gpus_per_host) +
                                   " GPUs per host: one must divide the other, or tensor-parallel groups straddle hosts");
  }
  return Status::ok();
}

std::string ClusterLayout::hostName(uint32_t host) {
  char name[24];
  std::snprintf(name, sizeof name, "node-%05u", host);
  return name;
}

model::RankTopology ClusterLayout::topology(uint32_t rank) const {
  model::RankTopology t;
  t.rank = rank;
  t.world_size = ranks();
  t.host = hostName(hostOf(rank));
  t.local_rank = rank % gpus_per_host;
  t.device = t.local_rank;
  t.tp_rank = tpRank(rank);
  t.tp_size = tp;
  t.pp_rank = ppRank(rank);
  t.pp_size = pp;
  t.dp_rank = dpRank(rank);
  t.dp_size = dp;
  t.cp_size = 1;
  t.ep_size = 1;
  return t;
}

}  // namespace argus::simulate
