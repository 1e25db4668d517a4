#include "model/step_summary.h"

namespace argus::model {

StepSummary summarize(const StepRecord& r) {
  StepSummary s;
  s.rank = r.rank;
  s.step = r.step;
  s.start_ns = r.start_ns;
  s.end_ns = r.end_ns;
  s.values = {r.phase(PhaseColumn::kCompute), r.phase(PhaseColumn::kCommExposed), r.phase(PhaseColumn::kBubble),
              commTransferNs(r.collectives),  r.iter_ns,                           r.phase(PhaseColumn::kGpuIdle)};
  for (const EventRecord& e : r.events) {
    if (static_cast<unsigned>(e.kind) < 32) s.event_kinds |= uint32_t{1} << static_cast<unsigned>(e.kind);
    if (e.kind != EventKind::kMarker || e.name_id == 0 || s.marker_count == StepSummary::kMaxMarkers) continue;
    s.markers[s.marker_count++] = e.name_id;
  }
  return s;
}

}  // namespace argus::model
