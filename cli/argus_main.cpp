// argus: the command line for everything but the server (docs/cli/argus.md).
#include <CLI/CLI.hpp>
#include <csignal>

#include "cli/capture_command.h"
#include "cli/demo_command.h"
#include "cli/dump_command.h"
#include "cli/eval_command.h"
#include "cli/flight_recorder_command.h"
#include "cli/import_command.h"
#include "cli/jobs_command.h"
#include "cli/query_command.h"
#include "cli/shell_command.h"
#include "cli/simulate_command.h"
#include "cli/verify_command.h"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"argus: always-on tracing and performance diagnosis for LLM training"};
  app.require_subcommand(1);
  int exit_code = 0;
  argus::cli::addDemoCommand(app, &exit_code);
  argus::cli::addJobsCommand(app, &exit_code);
  argus::cli::addQueryCommand(app, &exit_code);
  argus::cli::addShellCommand(app, &exit_code);
  argus::cli::addVerifyCommand(app, &exit_code);
  argus::cli::addDumpCommand(app, &exit_code);
  argus::cli::addImportCommand(app, &exit_code);
  argus::cli::addSimulateCommand(app, &exit_code);
  argus::cli::addEvalCommand(app, &exit_code);
  argus::cli::addCaptureCommand(app, &exit_code);
  argus::cli::addFlightRecorderCommand(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
