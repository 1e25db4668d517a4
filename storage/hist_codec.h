// The sparse-histogram codecs (docs/format/codecs.md#histograms): kHistWindow (the
// default) and, for histograms whose buckets lie far apart, kHistSparse (each histogram
// alone) / kHistSparseGrouped (against the previous histogram of the same group: kernels
// with the same signature and phase, whose duration distribution barely moves from step
// to step). The analysis pass keeps the smaller.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/duration_histogram.h"
#include "storage/column_codec.h"
#include "storage/hist_column.h"

namespace argus::storage {

// One pass over the histograms: their HistRow summaries (RowContext::hist_rows) into *rows
// and their buckets, back to back, into *buckets (RowContext::hist_buckets).
void summarizeHists(std::span<const model::DurationHistogram> values, std::vector<HistRow>* rows,
                    std::vector<model::DurationHistogram::Bucket>* buckets);

// kHistWindow: the window [first, last] of each histogram coded densely (zero counts
// included) against the previous histogram of the row's group, in separately zstd'ed
// streams, the window deltas usually bit-packed instead (kHistWindowPacked); with
// RowContext::counts the last count is implied. Always applies.
// A chunk of more rows than histWindowSegmentRows is cut into segments of that many, each
// with streams of its own and coded as if alone: a decoder wanting some rows (a step range
// of the block) inflates and reads only the segments that hold them, from their starts.
// The payload's first byte holds these flags (contextOf, chunk_format.h, reads the first
// two: the columns a reader loads first).
inline constexpr uint8_t kHistWindowGrouped = 1;   // needs RowContext::ids
inline constexpr uint8_t kHistWindowImplied = 2;   // needs RowContext::counts
inline constexpr uint8_t kHistWindowSegments = 4;
inline constexpr uint8_t kHistWindowPacked = 8;  // streams A and B packed (packed_deltas.h); needs kHistWindowSegments
inline constexpr size_t kHistWindowSegmentSteps = 128;  // a segment's rows when every group has one per step
inline constexpr size_t kHistWindowMinSegmentRows = 256;
size_t histWindowSegmentRows(uint32_t groups);
// How the window deltas are written: kEither writes both forms and keeps the packed one
// unless the zstd'ed varints are smaller by an eighth and 64 bytes; the others write only
// that form (a sealer's remembered choice, CodecHint::variant).
enum class HistDeltaForm : uint8_t { kEither, kPacked, kVarints };
// *chosen (if given): the form written.
bool encodeHistWindow(std::span<const model::DurationHistogram> values, const RowContext* ctx, std::string* out,
                      HistDeltaForm form = HistDeltaForm::kEither, HistDeltaForm* chosen = nullptr);
Status decodeHistWindow(std::string_view payload, size_t rows, const RowContext* ctx, HistColumn* out);

// Returns false when the codec does not apply (grouped without groups, integer codec).
bool encodeHistsWith(CodecId codec, std::span<const model::DurationHistogram> values, const RowContext* groups, std::string* out);
// With a hint: while the window codec keeps winning, the sparse form is not tried again
// until the hint runs out (CodecHint).
EncodedPayload encodeHists(std::span<const model::DurationHistogram> values, const RowContext* groups, CodecHint* hint = nullptr);
Status decodeHists(uint8_t codec_byte, std::string_view payload, size_t rows, const RowContext* groups,
                   HistColumn* out);

}  // namespace argus::storage
