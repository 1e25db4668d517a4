// `argus flight-recorder`: asks a job's running ranks, through argusd's HTTP API, to dump
// their flight recorders for a step range (docs/cli/argus.md, docs/http/api.md).
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

void addFlightRecorderCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
