// `argus import kineto`: replays PyTorch profiler (Kineto) traces through the step
// assembler and sends the records to argusd or writes them into a data directory
// (docs/cli/argus.md, docs/import/kineto.md).
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

// Adds the `import` subcommand (with `kineto` under it) to `app`; running it sets the
// process exit code via *exit_code: 0 all files imported, 1 some file failed.
void addImportCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
