// `argus eval`: scores the diagnosis on simulated jobs (each fault class alone at several
// scales, all classes mixed, fault-free runs): per class recall, localization accuracy,
// precision and detection latency; false windows per 10,000 fault-free steps; query time
// (docs/cli/argus.md, "argus eval").
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

// Adds the `eval` subcommand to `app`; running it sets the process exit code via *exit_code:
// 0 when every job ran (whatever the scores), 1 when one failed.
void addEvalCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
