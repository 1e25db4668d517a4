#include "diagnose/rank_phases.h"

#include <algorithm>

#include "diagnose/median.h"

namespace argus::diagnose {

void RankPhasesGatherer::finish(uint32_t rank, std::vector<RankPhasesPair>& out) {
  for (size_t w = 0; w < values_.size(); ++w) {
    for (int side = 0; side < 2; ++side) {
      auto& v = values_[w][side];
      if (v[0].empty()) continue;
      RankPhases& p = out[w][side][rank];
      p.steps = static_cast<uint32_t>(v[0].size());
      // Steps without comm_transfer_ns (older blocks) make its median mean nothing.
      const bool transfer_known = *std::min_element(v[3].begin(), v[3].end()) >= 0;
      double* fields[kColumns] = {&p.compute, &p.exposed, &p.bubble, &p.transfer, &p.iter, &p.idle};
      for (int c = 0; c < kColumns; ++c) {
        if (v[c].empty()) continue;
        *fields[c] = medianOf(v[c]);
        v[c].clear();
      }
      if (!transfer_known) p.transfer = -1;
    }
  }
}

}  // namespace argus::diagnose
