// `argus simulate`: a whole training job (TP x PP x DP ranks, 1F1B pipeline, a kernel mix
// from a real trace) with injected faults, streamed to argusd one session per rank or
// written into a data dir; `--truth FILE` writes the ground truth (docs/cli/simulate.md).
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

// Adds the `simulate` subcommand to `app`; running it sets the process exit code via
// *exit_code: 0 every record stored, 1 otherwise.
void addSimulateCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
