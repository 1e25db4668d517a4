// The sparse-histogram codecs (docs/format/codecs.md#histograms): kHistSparse codes each
// histogram alone; kHistSparseGrouped codes it against the previous histogram of the same
// group (kernels: same signature and phase), which pays because a kernel's duration
// distribution barely moves from step to step. The analysis pass keeps the smaller.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/duration_histogram.h"
#include "storage/column_codec.h"

namespace argus::storage {

// Returns false when the codec does not apply (grouped without groups, integer codec).
bool encodeHistsWith(CodecId codec, std::span<const model::DurationHistogram> values, const RowGroups* groups, std::string* out);
EncodedPayload encodeHists(std::span<const model::DurationHistogram> values, const RowGroups* groups);
Status decodeHists(uint8_t codec_byte, std::string_view payload, size_t rows, const RowGroups* groups,
                   std::vector<model::DurationHistogram>* out);

}  // namespace argus::storage
