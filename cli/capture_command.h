// `argus capture [--server HOST:PORT] [--job J] [--shim PATH] -- CMD ARGS...`: runs a
// training command with the capture shim injected (docs/cli/argus.md, docs/capture/shim.md).
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

// Adds the `capture` subcommand to `app`; running it sets *exit_code to the command's exit
// code (128 + signal when a signal killed it; 127 when it could not be started; 2 when the
// shim library is not found).
void addCaptureCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
