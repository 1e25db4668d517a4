#include "simulate/fault.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>
#include <vector>

namespace argus::simulate {

namespace {

constexpr const char* kKindNames[kFaultKindCount] = {"compute_straggler", "masked_straggler", "link_degradation", "pipeline_bubble", "jit_stall"};

template <typename T>
bool parseNumber(std::string_view text, T* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

bool parseSeverity(std::string_view text, double* out) {
  // std::from_chars for double is in libstdc++ 11+, but it accepts "nan" and "inf".
  if (!parseNumber(text, out)) return false;
  return std::isfinite(*out) && *out > 0 && *out <= 100;
}

// The host after `rank`'s in the ring its traffic crosses: its data-parallel ring's next
// member on another host, else its pipeline successor's host.
std::optional<uint32_t> peerHost(const ClusterLayout& l, uint32_t rank) {
  const uint32_t host = l.hostOf(rank), t = l.tpRank(rank), k = l.ppRank(rank), d = l.dpRank(rank);
  for (uint32_t step = 1; step < l.dp; ++step) {
    uint32_t other = l.hostOf(l.rankOf(t, k, (d + step) % l.dp));
    if (other != host) return other;
  }
  for (uint32_t s = 0; s < l.pp; ++s) {
    uint32_t other = l.hostOf(l.rankOf(t, s, d));
    if (other != host) return other;
  }
  return std::nullopt;
}

}  // namespace

const char* faultKindName(FaultKind kind) { return kKindNames[static_cast<int>(kind)]; }

double Fault::defaultSeverity(FaultKind kind) {
  switch (kind) {
    case FaultKind::kLinkDegradation: return 3.0;  // a quarter of the bandwidth
    case FaultKind::kJitStall: return 1.0;
    default: return 0.3;
  }
}

std::vector<Fault> staggeredFaults(uint64_t first_step, uint64_t last_step) {
  const uint64_t slot = last_step > first_step ? (last_step - first_step) / kFaultKindCount : 0;
  std::vector<Fault> faults;
  for (int k = 0; k < kFaultKindCount; ++k) {
    Fault f;
    f.kind = static_cast<FaultKind>(k);
    f.from_step = first_step + k * slot;
    f.steps = f.kind == FaultKind::kJitStall ? 3 : std::max<uint64_t>(3, slot / 2);
    f.severity = Fault::defaultSeverity(f.kind);
    faults.push_back(f);
  }
  return faults;
}

Result<Fault> parseFault(std::string_view spec) {
  const size_t colon = spec.find(':');
  const std::string_view kind_text = spec.substr(0, colon);
  Fault f;
  int kind = 0;
  while (kind < kFaultKindCount && kind_text != kKindNames[kind]) ++kind;
  if (kind == kFaultKindCount) {
    std::string known;
    for (const char* name : kKindNames) known += std::string(known.empty() ? "" : ", ") + name;
    return Status::invalidArgument("fault '" + std::string(spec) + "': unknown kind '" + std::string(kind_text) + "' (known: " + known + ")");
  }
  f.kind = static_cast<FaultKind>(kind);
  f.severity = Fault::defaultSeverity(f.kind);
  bool has_onset = false;
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : spec.substr(colon + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq), value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    auto bad = [&](const char* what) { return Status::invalidArgument("fault '" + std::string(spec) + "': " + std::string(key) + ": " + what); };
    if (eq == std::string_view::npos) return bad("expected key=value");
    uint32_t n = 0;
    if (key == "at") {
      if (!parseNumber(value, &f.from_step)) return bad("not a step number");
      has_onset = true;
    } else if (key == "for") {
      if (!parseNumber(value, &f.steps)) return bad("not a step count");
    } else if (key == "severity") {
      if (!parseSeverity(value, &f.severity)) return bad("not a number in (0, 100]");
    } else if (key == "rank") {
      if (!parseNumber(value, &n)) return bad("not a rank");
      f.rank = n;
    } else if (key == "stage") {
      if (!parseNumber(value, &n)) return bad("not a pipeline stage");
      f.stage = n;
    } else if (key == "hosts") {
      const size_t dash = value.find('-');
      uint32_t a = 0, b = 0;
      if (dash == std::string_view::npos || !parseNumber(value.substr(0, dash), &a) || !parseNumber(value.substr(dash + 1), &b)) {
        return bad("expected two host indices, A-B");
      }
      f.hosts = std::pair{std::min(a, b), std::max(a, b)};
    } else if (key == "kernel") {
      if (value.empty()) return bad("empty");
      f.kernel = value;
    } else {
      return bad("unknown key (at, for, severity, rank, stage, hosts, kernel)");
    }
  }
  if (!has_onset) return Status::invalidArgument("fault '" + std::string(spec) + "': no onset (at=STEP)");
  const bool ranked = f.kind == FaultKind::kComputeStraggler || f.kind == FaultKind::kMaskedStraggler || f.kind == FaultKind::kJitStall;
  auto misplaced = [&](const char* key) { return Status::invalidArgument("fault '" + std::string(spec) + "': " + key + " does not apply to " + kKindNames[kind]); };
  if (f.rank && !ranked) return misplaced("rank");
  if (f.stage && f.kind != FaultKind::kPipelineBubble) return misplaced("stage");
  if (f.hosts && f.kind != FaultKind::kLinkDegradation) return misplaced("hosts");
  if (!f.kernel.empty() && f.kind != FaultKind::kComputeStraggler && f.kind != FaultKind::kMaskedStraggler) return misplaced("kernel");
  return f;
}

Status resolveFault(Fault* f, const ClusterLayout& l, uint64_t seed) {
  std::mt19937_64 rng(seed ^ (0x5eedfa17ull * (f->from_step + 1)) ^ static_cast<uint64_t>(f->kind));
  const std::string what = std::string(faultKindName(f->kind)) + " at step " + std::to_string(f->from_step);
  switch (f->kind) {
    case FaultKind::kComputeStraggler:
    case FaultKind::kMaskedStraggler:
    case FaultKind::kJitStall:
      if (!f->rank) f->rank = static_cast<uint32_t>(rng() % l.ranks());
      if (*f->rank >= l.ranks()) return Status::invalidArgument(what + ": rank " + std::to_string(*f->rank) + " past the job's " + std::to_string(l.ranks()) + " ranks");
      break;
    case FaultKind::kPipelineBubble:
      if (l.pp < 2) return Status::invalidArgument(what + ": the job has no pipeline (pp 1)");
      if (!f->stage) f->stage = static_cast<uint32_t>(rng() % l.pp);
      if (*f->stage >= l.pp) return Status::invalidArgument(what + ": stage " + std::to_string(*f->stage) + " past the job's " + std::to_string(l.pp) + " stages");
      break;
    case FaultKind::kLinkDegradation:
      if (!f->hosts) {
        const uint32_t first = static_cast<uint32_t>(rng() % l.ranks());
        for (uint32_t i = 0; i < l.ranks() && !f->hosts; ++i) {
          const uint32_t rank = (first + i) % l.ranks();
          if (std::optional<uint32_t> peer = peerHost(l, rank)) f->hosts = std::pair{std::min(l.hostOf(rank), *peer), std::max(l.hostOf(rank), *peer)};
        }
        if (!f->hosts) return Status::invalidArgument(what + ": the job fits on one host, no network link to degrade");
      }
      if (f->hosts->second >= l.hosts()) return Status::invalidArgument(what + ": host " + std::to_string(f->hosts->second) + " past the job's " + std::to_string(l.hosts()) + " hosts");
      if (f->hosts->first == f->hosts->second) return Status::invalidArgument(what + ": a link joins two different hosts");
      break;
  }
  return Status::ok();
}

}  // namespace argus::simulate
