#include "model/step_summary.h"

namespace argus::model {

StepSummary summarize(const StepRecord& r) {
  StepSummary s;
  s.rank = r.rank;
  s.step = r.step;
  s.start_ns = r.start_ns;
  s.end_ns = r.end_ns;
  s.series = {r.iter_ns, r.phase(PhaseColumn::kCompute), commTransferNs(r.collectives)};
  for (const EventRecord& e : r.events) {
    if (e.kind != EventKind::kMarker || e.name_id == 0) continue;
    if (s.marker_count == StepSummary::kMaxMarkers) break;
    s.markers[s.marker_count++] = e.name_id;
  }
  return s;
}

}  // namespace argus::model
