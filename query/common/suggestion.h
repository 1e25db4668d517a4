// "Did you mean" hints for misspelled names (tables, columns, functions, parameters).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace argus::query {

// "; did you mean 'iter_ns'?" for the candidate closest to name (edit distance, or a
// prefix of 3+ characters), or "" when none is close.
std::string suggestion(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace argus::query
