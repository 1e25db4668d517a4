// argus query: runs one statement of the query language (docs/cli/argus.md, "argus query";
// the language: docs/query/language.md), embedded on a data directory or against argusd.
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

void addQueryCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
