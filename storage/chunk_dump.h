// Text forms of stored values for `argus dump` and tests (docs/format/). Never fail: a
// value that does not decode is shown with the reason and its bytes in hex.
#pragma once

#include <string>
#include <string_view>

namespace argus::storage {

// A chunk value: header fields, statistics, and the values when the codec decodes without
// the block's other columns (up to `max_values`; context codecs say which columns they need).
std::string describeChunk(std::string_view key, std::string_view value, size_t max_values = 16);

// A head entry: one line per record (step, attempt, size, keyframe or delta) with the
// decoded record in brief (step fields, phases, list sizes, first kernels) where the entry
// alone decodes it.
std::string describeHeadEntry(std::string_view value);

// Any value of column family `cf` ("meta", "head", "chunk").
std::string describeValue(std::string_view cf, std::string_view key, std::string_view value);

}  // namespace argus::storage
