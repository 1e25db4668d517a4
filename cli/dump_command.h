// `argus dump`: decodes stored objects (meta entries, head entries, column chunks) and wire
// frames to text, for people and tests (docs/cli/argus.md). Hidden from the main help.
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

void addDumpCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
