#include "cli/record_text.h"

#include <cinttypes>
#include <cstdio>

namespace argus::cli {

namespace {

template <typename... Args>
void appendf(std::string* out, const char* format, Args... args) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, format, args...);
  if (n > 0) out->append(buf, static_cast<size_t>(std::min<int>(n, sizeof buf - 1)));
}

}  // namespace

std::string describeStepRecord(const model::StepRecord& rec) {
  std::string out;
  appendf(&out, "step rank=%" PRIu32 " step=%" PRIu64 " attempt=%u start_ns=%" PRId64 " end_ns=%" PRId64 " iter_ns=%" PRId64 " flags=0x%x\n",
          rec.rank, rec.step, static_cast<unsigned>(rec.attempt), rec.start_ns, rec.end_ns, rec.iter_ns, rec.flags);
  out += "  phases";
  for (int c = 0; c < model::kPhaseColumnCount; ++c) {
    appendf(&out, " %s=%" PRId64, model::phaseColumnName(static_cast<model::PhaseColumn>(c)), rec.phase_ns[c]);
  }
  out += "\n";
  for (const model::KernelStat& k : rec.kernels) {
    appendf(&out, "  kernel sig=%016" PRIx64 " phase=%s count=%" PRIu32 " total_ns=%" PRId64 " p50_ns=%.0f p99_ns=%.0f buckets=%zu\n",
            k.signature, model::phaseName(k.phase), k.count, k.total_ns, k.hist.quantile(0.5), k.hist.quantile(0.99),
            k.hist.buckets().size());
  }
  for (const model::CollectiveStat& c : rec.collectives) {
    appendf(&out, "  collective op=%s comm=%016" PRIx64 " size_class=%u peer=%" PRId64 " count=%" PRIu32 " bytes=%" PRIu64
            " total_ns=%" PRId64 " wait_ns=%" PRId64 " bandwidth_gbps=%.3f\n",
            model::collectiveOpName(c.op), c.communicator, static_cast<unsigned>(c.size_class),
            c.peer_rank == model::CollectiveStat::kNoPeer ? int64_t{-1} : static_cast<int64_t>(c.peer_rank), c.count, c.bytes,
            c.total_ns, c.wait_ns, model::effectiveBandwidth(c) / 1e9);
  }
  for (const model::StackStat& s : rec.stacks) {
    appendf(&out, "  stack id=%016" PRIx64 " samples=%" PRIu32 "\n", s.stack_id, s.samples);
  }
  for (const model::EventRecord& e : rec.events) {
    appendf(&out, "  event kind=%s ts_ns=%" PRId64 " value=%" PRIu64 " name_id=%" PRIu64 "\n", model::eventKindName(e.kind), e.ts_ns,
            e.value, e.name_id);
  }
  return out;
}

std::string describeTopology(const model::RankTopology& t) {
  std::string out;
  appendf(&out, "rank=%u world=%u host=%s local_rank=%u device=%u tp=%u/%u pp=%u/%u dp=%u/%u cp=%u/%u ep=%u/%u", t.rank,
          t.world_size, t.host.c_str(), t.local_rank, t.device, t.tp_rank, t.tp_size, t.pp_rank, t.pp_size, t.dp_rank,
          t.dp_size, t.cp_rank, t.cp_size, t.ep_rank, t.ep_size);
  return out;
}

}  // namespace argus::cli
