// NameClassifier: NameRules compiled once, for classifying many names fast (the step
// assembler classifies every distinct name of a session on first sight; an import starts a
// session per file). Same answers as NameRules::stepMarker / classifyRange / classifyKernel
// (tests/unit/capture/name_classifier_test.cpp holds them to it).
//
// Why: kernel names run to hundreds of bytes of template text, and one scan of the name per
// "contains" rule was most of the assembler's time on small real traces. Here one pass over
// the name tests every contains-rule of a list at once: 16 positions at a time are compared
// with the first two bytes of every pattern, and only the few that match are looked at.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/name_rules.h"

namespace argus::capture {

class NameClassifier {
 public:
  explicit NameClassifier(const NameRules& rules);

  std::optional<int64_t> stepMarker(std::string_view name) const { return rules_.stepMarker(name); }
  RangeClass classifyRange(std::string_view name) const;
  bool isCommRange(std::string_view name) const { return comm_ranges_(name) >= 0; }
  KernelClass classifyKernel(std::string_view name) const;

 private:
  // One ordered rule list: which rule matches a name first.
  class FirstMatch {
   public:
    struct Rule {
      MatchKind match;
      bool ignore_case;
      std::string pattern;
    };
    explicit FirstMatch(std::vector<Rule> rules);
    // Returns the index of the first rule that matches `name`, or -1.
    int operator()(std::string_view name) const;

   private:
    static constexpr size_t kScanned = 64;  // contains-rules past this index are matched one by one
    // Bit i set: contains-rule i (i >= first) occurs in `name`; stops early once no earlier
    // wanted rule can still be found.
    uint64_t scan(std::string_view name, size_t first) const;

    std::vector<Rule> rules_;
    uint64_t contains_ = 0;  // bit i: rule i < kScanned is a contains-rule
    uint64_t empty_ = 0;     // contains-rules with an empty pattern (they match every name)
    uint64_t one_byte_ = 0;  // contains-rules with a one-byte pattern (no pair to probe)
    // The first two bytes of the patterns of two or more bytes, each compared with a name's
    // byte OR-ed with its `fold` (0x20 for a letter of an ignore-case pattern, else 0).
    struct Probe {
      unsigned char byte0, byte1, fold0, fold1;
      bool operator==(const Probe&) const = default;
    };
    std::vector<Probe> probes_;  // those folding both bytes first
    size_t folded_probes_ = 0;
    // Rule i's first (up to) 8 bytes as a word compare: ((name word | fold) & mask) == want.
    struct Head {
      uint64_t want = 0, fold = 0, mask = 0;
      bool exact = false;  // the pattern has at most 8 bytes: a match is the whole match
    };
    std::array<Head, kScanned> heads_{};
    // Byte -> the contains-rules whose pattern begins with it (any case variant).
    std::array<uint64_t, 256> first_byte_{};
  };

  template <typename R>
  static std::vector<FirstMatch::Rule> rulesOf(const std::vector<R>& rules);

  NameRules rules_;
  FirstMatch ranges_, kernels_, comm_ranges_;
};

}  // namespace argus::capture
