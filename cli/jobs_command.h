// `argus jobs`: lists the jobs of a data directory, sets a job's retention, drops a job.
// Works embedded on the directory, so argusd must not be running on it (RocksDB's lock
// says so with a clear error).
#pragma once

#include <CLI/CLI.hpp>

namespace argus::cli {

void addJobsCommand(CLI::App& app, int* exit_code);

}  // namespace argus::cli
