// Kineto timestamps are microseconds written as JSON numbers ("1694128201426674",
// "4458676416788.066", "607312.0"). A double cannot hold 1.6e15 us with a fraction to the
// ns, so the importer converts the number's text, not its double value.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace argus::import {

// Exact conversion of a decimal number of microseconds (JSON number syntax, exponent
// allowed) to integer nanoseconds: the value times 1000, rounded half away from zero at
// the first digit below the nanosecond. Returns nullopt for text that is not a number or
// a result outside int64.
std::optional<int64_t> microsTextToNs(std::string_view text);

}  // namespace argus::import
