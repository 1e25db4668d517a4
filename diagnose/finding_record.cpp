#include "diagnose/finding_record.h"

#include "base/bytes.h"

namespace argus::diagnose {

namespace {

constexpr uint8_t kVersion = 1;
constexpr uint64_t kMaxRanks = uint64_t{1} << 22;  // the diagnosis's rank bound (window_analysis)

}  // namespace

std::string encodeRecordedFinding(const RecordedFinding& r) {
  const Finding& f = r.finding;
  std::string out;
  ByteWriter w(&out);
  w.putU8(kVersion);
  w.putSignedVarint(r.detected_ns);
  w.putU8(static_cast<uint8_t>(f.kind));
  w.putVarint(f.from_step);
  w.putVarint(f.to_step);
  w.putSignedVarint(f.from_ns);
  w.putSignedVarint(f.to_ns);
  w.putVarint(f.ranks.size());
  for (uint32_t rank : f.ranks) w.putVarint(rank);
  w.putVarint(f.pp_rank ? uint64_t{*f.pp_rank} + 1 : 0);  // 0: none
  w.putString(f.link);
  w.putString(f.kernel);
  w.putDouble(f.slowdown);
  w.putDouble(f.confidence);
  w.putString(f.evidence);
  w.putVarint(r.steps_after_onset);
  w.putDouble(r.lag_s);
  return out;
}

Status decodeRecordedFinding(std::string_view value, RecordedFinding* out) {
  ByteReader in(value, "recorded finding");
  RecordedFinding r;
  Finding& f = r.finding;
  uint8_t version = 0, kind = 0;
  ARGUS_RETURN_IF_ERROR(in.getU8(&version));
  if (version != kVersion) return Status::corruption("recorded finding: version " + std::to_string(version) + ", this build reads 1");
  ARGUS_RETURN_IF_ERROR(in.getSignedVarint(&r.detected_ns));
  ARGUS_RETURN_IF_ERROR(in.getU8(&kind));
  if (kind > static_cast<uint8_t>(FindingKind::kUnexplained)) return Status::corruption("recorded finding: unknown kind " + std::to_string(kind));
  f.kind = static_cast<FindingKind>(kind);
  ARGUS_RETURN_IF_ERROR(in.getVarint(&f.from_step));
  ARGUS_RETURN_IF_ERROR(in.getVarint(&f.to_step));
  ARGUS_RETURN_IF_ERROR(in.getSignedVarint(&f.from_ns));
  ARGUS_RETURN_IF_ERROR(in.getSignedVarint(&f.to_ns));
  uint64_t ranks = 0, pp = 0;
  ARGUS_RETURN_IF_ERROR(in.getBoundedVarint(&ranks, kMaxRanks, "rank count"));
  for (uint64_t i = 0; i < ranks; ++i) {
    uint64_t rank = 0;
    ARGUS_RETURN_IF_ERROR(in.getBoundedVarint(&rank, UINT32_MAX, "rank"));
    f.ranks.push_back(static_cast<uint32_t>(rank));
  }
  ARGUS_RETURN_IF_ERROR(in.getBoundedVarint(&pp, uint64_t{UINT32_MAX} + 1, "stage"));
  if (pp > 0) f.pp_rank = static_cast<uint32_t>(pp - 1);
  std::string_view link, kernel, evidence;
  ARGUS_RETURN_IF_ERROR(in.getString(&link));
  ARGUS_RETURN_IF_ERROR(in.getString(&kernel));
  ARGUS_RETURN_IF_ERROR(in.getDouble(&f.slowdown));
  ARGUS_RETURN_IF_ERROR(in.getDouble(&f.confidence));
  ARGUS_RETURN_IF_ERROR(in.getString(&evidence));
  ARGUS_RETURN_IF_ERROR(in.getVarint(&r.steps_after_onset));
  ARGUS_RETURN_IF_ERROR(in.getDouble(&r.lag_s));
  if (in.remaining() != 0) return Status::corruption("recorded finding: " + std::to_string(in.remaining()) + " bytes past its end");
  f.link = link;
  f.kernel = kernel;
  f.evidence = evidence;
  *out = std::move(r);
  return Status::ok();
}

}  // namespace argus::diagnose
