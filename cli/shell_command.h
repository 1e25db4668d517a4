// argus shell: an interactive prompt for the query language (docs/cli/argus.md, "argus
// shell"), embedded on a data directory or against argusd; reads scripts from a pipe too.
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

void addShellCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
