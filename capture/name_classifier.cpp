#include "capture/name_classifier.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <tuple>

namespace argus::capture {

namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool isLetter(char c) { return lower(c) != upper(c); }

// 16 bytes of a name at once, through GCC/Clang vector extensions: SSE2 on x86-64, NEON on
// ARM, plain code elsewhere.
typedef unsigned char Bytes16 __attribute__((vector_size(16)));

Bytes16 load16(const unsigned char* p) {
  Bytes16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

Bytes16 splat(unsigned char c) { return Bytes16{} + c; }

bool anySet(Bytes16 v) {
  uint64_t w[2];
  std::memcpy(w, &v, sizeof w);
  return (w[0] | w[1]) != 0;
}

bool equalAt(std::string_view name, size_t pos, std::string_view pattern, bool ignore_case) {
  if (pos + pattern.size() > name.size()) return false;
  if (!ignore_case) return std::memcmp(name.data() + pos, pattern.data(), pattern.size()) == 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (lower(name[pos + i]) != lower(pattern[i])) return false;
  }
  return true;
}

}  // namespace

NameClassifier::FirstMatch::FirstMatch(std::vector<Rule> rules) : rules_(std::move(rules)) {
  for (size_t i = 0; i < rules_.size() && i < kScanned; ++i) {
    const Rule& r = rules_[i];
    if (r.match != MatchKind::kContains) continue;
    uint64_t bit = uint64_t{1} << i;
    contains_ |= bit;
    const std::string& p = r.pattern;
    if (p.empty()) {
      empty_ |= bit;
      continue;
    }
    auto variants = [&](char c) { return r.ignore_case ? std::array<char, 2>{lower(c), upper(c)} : std::array<char, 2>{c, c}; };
    for (char c0 : variants(p[0])) first_byte_[static_cast<unsigned char>(c0)] |= bit;
    if (p.size() == 1) {
      one_byte_ |= bit;
      continue;
    }
    // A letter of an ignore-case pattern matches both cases: compare it with the byte
    // folded to lower case (| 0x20 lowers exactly the letters among the bytes it can equal).
    auto fold = [&](char c) -> std::pair<unsigned char, unsigned char> {
      if (r.ignore_case && isLetter(c)) return {static_cast<unsigned char>(lower(c)), 0x20};
      return {static_cast<unsigned char>(c), 0};
    };
    unsigned char want[8] = {}, folds[8] = {}, mask[8] = {};
    for (size_t k = 0; k < 8 && k < p.size(); ++k) {
      std::tie(want[k], folds[k]) = fold(p[k]);
      mask[k] = 0xff;
    }
    Head& h = heads_[i];
    std::memcpy(&h.want, want, 8);
    std::memcpy(&h.fold, folds, 8);
    std::memcpy(&h.mask, mask, 8);
    h.exact = p.size() <= 8;
    Probe probe{want[0], want[1], folds[0], folds[1]};
    if (std::find(probes_.begin(), probes_.end(), probe) == probes_.end()) probes_.push_back(probe);
  }
  // Probes of two letters of ignore-case patterns first: they compare with the block folded
  // once, not once per probe.
  auto both = [](const Probe& x) { return x.fold0 == 0x20 && x.fold1 == 0x20; };
  std::stable_partition(probes_.begin(), probes_.end(), both);
  folded_probes_ = static_cast<size_t>(std::count_if(probes_.begin(), probes_.end(), both));
}

uint64_t NameClassifier::FirstMatch::scan(std::string_view name, size_t first) const {
  const uint64_t wanted = contains_ & ~((uint64_t{1} << first) - 1);
  uint64_t hits = empty_ & wanted;
  // Done when the earliest hit has no wanted rule before it still unfound.
  auto done = [&] { return hits != 0 && (((hits & (~hits + 1)) - 1) & wanted & ~hits) == 0; };
  if (done()) return hits;
  const auto* p = reinterpret_cast<const unsigned char*>(name.data());
  const size_t n = name.size();
  auto tryAt = [&](size_t pos, uint64_t candidates) {
    candidates &= wanted & ~hits;
    while (candidates != 0) {
      int i = std::countr_zero(candidates);
      candidates &= candidates - 1;
      // The first 8 bytes in one compare (exact for short patterns), then the rest.
      const Head& h = heads_[i];
      if (pos + 8 <= n) {
        uint64_t w;
        std::memcpy(&w, p + pos, 8);
        if (((w | h.fold) & h.mask) != h.want) continue;
        if (h.exact) {
          hits |= uint64_t{1} << i;
          continue;
        }
      }
      if (equalAt(name, pos, rules_[i].pattern, rules_[i].ignore_case)) hits |= uint64_t{1} << i;
    }
  };
  if ((one_byte_ & wanted) != 0) {
    // Rare: a one-byte pattern; every position is a candidate by its first byte.
    for (size_t pos = 0; pos < n && !done(); ++pos) tryAt(pos, first_byte_[p[pos]]);
    return hits;
  }
  // Candidates: positions where some pattern's first two bytes occur, 16 positions at a
  // time (few match: one probe per pattern, not one scan per pattern); each candidate is
  // then matched exactly.
  const size_t np = probes_.size(), nf = folded_probes_;
  Bytes16 want0[kScanned], want1[kScanned], fold0[kScanned], fold1[kScanned];
  for (size_t k = 0; k < np; ++k) {
    want0[k] = splat(probes_[k].byte0), want1[k] = splat(probes_[k].byte1);
    fold0[k] = splat(probes_[k].fold0), fold1[k] = splat(probes_[k].fold1);
  }
  const Bytes16 lower_bit = splat(0x20);
  // `q`: 17 readable bytes, the name's from `base` on.
  auto block = [&](const unsigned char* q, size_t base) {
    Bytes16 v0 = load16(q), v1 = load16(q + 1), any{};
    Bytes16 l0 = v0 | lower_bit, l1 = v1 | lower_bit;
    for (size_t k = 0; k < nf; ++k) any |= reinterpret_cast<Bytes16>((l0 == want0[k]) & (l1 == want1[k]));
    for (size_t k = nf; k < np; ++k) any |= reinterpret_cast<Bytes16>(((v0 | fold0[k]) == want0[k]) & ((v1 | fold1[k]) == want1[k]));
    if (!anySet(any)) return false;
    for (size_t j = 0; j < 16 && base + j + 1 < n; ++j) {
      if (any[j] == 0) continue;
      tryAt(base + j, first_byte_[p[base + j]]);
      if (done()) return true;
    }
    return false;
  };
  size_t pos = 0;
  for (; pos + 17 <= n; pos += 16) {
    if (block(p + pos, pos)) return hits;
  }
  if (pos + 1 < n) {
    unsigned char tail[17] = {};  // the last pairs, padded (tryAt checks the real bounds)
    std::memcpy(tail, p + pos, n - pos);
    block(tail, pos);
  }
  return hits;
}

int NameClassifier::FirstMatch::operator()(std::string_view name) const {
  uint64_t hits = 0;
  bool scanned = false;
  for (size_t i = 0; i < rules_.size(); ++i) {
    const Rule& r = rules_[i];
    if (i >= kScanned || r.match != MatchKind::kContains) {
      if (matches(r.match, r.ignore_case, r.pattern, name)) return static_cast<int>(i);
      continue;
    }
    if (!scanned) {
      hits = scan(name, i);
      scanned = true;
    }
    if ((hits >> i) & 1) return static_cast<int>(i);
  }
  return -1;
}

template <typename R>
std::vector<NameClassifier::FirstMatch::Rule> NameClassifier::rulesOf(const std::vector<R>& rules) {
  std::vector<FirstMatch::Rule> out;
  for (const R& r : rules) out.push_back({r.match, r.ignore_case, r.pattern});
  return out;
}

NameClassifier::NameClassifier(const NameRules& rules) : rules_(rules), ranges_(rulesOf(rules.ranges)), kernels_(rulesOf(rules.kernels)),
      comm_ranges_(rulesOf(rules.comm_ranges)) {}

RangeClass NameClassifier::classifyRange(std::string_view name) const {
  int i = ranges_(name);
  return i < 0 ? RangeClass::kNone : rules_.ranges[static_cast<size_t>(i)].cls;
}

KernelClass NameClassifier::classifyKernel(std::string_view name) const {
  int i = kernels_(name);
  return kernelClassOf(i < 0 ? rules_.kernel_default : rules_.kernels[static_cast<size_t>(i)].phase, name);
}

}  // namespace argus::capture
