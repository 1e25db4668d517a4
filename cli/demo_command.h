// `argus demo`: the main job on the embedded default. Starts a local argusd on a temporary
// data dir, streams synthetic StepRecords from a small cluster over the real ingest
// protocol, queries them back over HTTP and prints what a person wants to see.
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

// Adds the `demo` subcommand to `app`; running it sets the process exit code via *exit_code.
void addDemoCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
