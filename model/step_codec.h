// StepEncoder / StepDecoder: the compact byte form of StepRecords (docs/wire/step-record.md).
//
// One encoder per rank session. Strings never appear (ids only). Signatures and other
// 64-bit ids are replaced by dense per-session ids assigned in order of first appearance,
// so a decoder that has seen the same stream rebuilds the same mapping. In delta mode a
// record is coded against the previous record of the same encoder (steps repeat: same
// signatures, similar counts and times); the first record after construction or reset()
// is a keyframe that needs no history. zstd is applied last, per record, only when it
// saves enough to pay for the decompression. The first byte of every encoding is a format/flags byte, so a
// decoder can tell keyframes, deltas and compression apart and reject unknown versions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/step_record.h"

namespace argus::model {

struct StepCodecOptions {
  bool delta = true;   // code against the previous record of this session
  bool zstd = true;    // zstd the record body when that saves at least an eighth of it
  int zstd_level = 3;
};

class StepEncoder {
 public:
  explicit StepEncoder(StepCodecOptions options = {});
  // Move-only: a copy would share this encoder's history, and interleaving two sessions'
  // records in one history breaks both chains.
  StepEncoder(StepEncoder&&) = default;
  StepEncoder& operator=(StepEncoder&&) = default;
  StepEncoder(const StepEncoder&) = delete;
  StepEncoder& operator=(const StepEncoder&) = delete;
  // Appends the encoding of `rec` to *out. Allocates nothing in steady state beyond
  // growing *out (and zstd's context once).
  // REQUIRES: rec is canonical (StepRecord::canonicalize()).
  void encode(const StepRecord& rec, std::string* out);
  // Forgets all history: the next record is a keyframe with fresh dense ids
  // (used when a session reconnects).
  void reset();
 private:
  struct State;
  StepCodecOptions options_;
  std::shared_ptr<State> state_;
};

// Decoded-size budget (docs/wire/step-record.md, "Decoded-size budget"). A record's
// decoded size in units is its list entries (kernels, collectives, stacks, events) plus its
// histogram buckets. A delta record can repeat the previous record's lists and histograms in
// a byte or two, so without a budget a few hundred input bytes decode to megabytes. The
// decoder refuses (Corruption naming the field) a record whose units exceed
// decodedUnitBudget(encoded bytes, counting a zstd body at its decompressed size): kDecodedUnitsPerByte per encoded byte, at least
// kDecodedUnitsFloor, at most kMaxDecodedUnits.
inline constexpr size_t kDecodedUnitsPerByte = 64;
inline constexpr size_t kDecodedUnitsFloor = size_t{1} << 16;
inline constexpr size_t kMaxDecodedUnits = size_t{1} << 22;  // ~32 MB of buckets
constexpr size_t decodedUnitBudget(size_t encoded_bytes) {
  size_t b = encoded_bytes > kMaxDecodedUnits / kDecodedUnitsPerByte ? kMaxDecodedUnits : encoded_bytes * kDecodedUnitsPerByte;
  return b < kDecodedUnitsFloor ? kDecodedUnitsFloor : b;
}
// The units decodedUnitBudget() is compared with.
size_t decodedUnits(const StepRecord& rec);

class StepDecoder {
 public:
  StepDecoder();
  // Move-only, as StepEncoder.
  StepDecoder(StepDecoder&&) = default;
  StepDecoder& operator=(StepDecoder&&) = default;
  StepDecoder(const StepDecoder&) = delete;
  StepDecoder& operator=(const StepDecoder&) = delete;
  // Decodes one encoding into *out. Hostile input yields Corruption (never a crash,
  // never an allocation larger than the input justifies: see decodedUnitBudget()). A delta record without the
  // matching history yields Corruption naming the missing reference. Decoding into a
  // reused record reuses its lists' and histograms' capacity: no allocation in steady state.
  Status decode(std::string_view in, StepRecord* out);
  void reset();
 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Encodes one record with no history: a keyframe that decodes alone (dumps, tests, seeds).
// The out-parameter form appends to *out and allocates nothing once *out has the
// capacity (the per-thread scratch is reused). Thread-safe (per-thread state).
std::string encodeStandalone(const StepRecord& rec);
void encodeStandalone(const StepRecord& rec, std::string* out);
// Decodes a keyframe into *out, reusing its lists' and histograms' capacity.
// Thread-safe (per-thread state).
Status decodeStandalone(std::string_view in, StepRecord* out);

}  // namespace argus::model
