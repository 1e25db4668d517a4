// `argus verify`: reads every entry of a data directory the way readers would and reports
// the damage scans cannot see (storage/store_verifier.h, docs/cli/argus.md).
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

void addVerifyCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
