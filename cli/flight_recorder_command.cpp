#include "cli/flight_recorder_command.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/http_client.h"
#include "wire/tcp.h"

namespace argus::cli {

namespace {

struct FlightRecorderOptions {
  std::string server;
  std::string token;
  std::string job;
  uint64_t from_step = 0, to_step = 0;
  std::string ranks;  // "0,3"; empty: all
};

int runFlightRecorder(const FlightRecorderOptions& o) {
  std::string host;
  uint16_t port = 0;
  if (Status s = wire::parseHostPort(o.server, &host, &port); !s.isOk()) {
    std::fprintf(stderr, "argus flight-recorder: --server: %s\n", s.message().c_str());
    return 2;
  }
  if (o.from_step > o.to_step) {
    std::fprintf(stderr, "argus flight-recorder: --from-step %llu is after --to-step %llu\n",
                 static_cast<unsigned long long>(o.from_step), static_cast<unsigned long long>(o.to_step));
    return 2;
  }
  std::string target = "/api/v1/jobs/" + o.job + "/flight-recorder?from_step=" + std::to_string(o.from_step) +
                       "&to_step=" + std::to_string(o.to_step) + (o.ranks.empty() ? "" : "&ranks=" + o.ranks);
  auto reply = httpRequest(host, port, "POST", target, {}, std::chrono::seconds(30), httpToken(o.token));
  if (!reply.isOk()) {
    std::fprintf(stderr, "argus flight-recorder: %s: %s\n", o.server.c_str(), reply.status().toString().c_str());
    return 1;
  }
  nlohmann::json body = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
  if (reply->status != 202) {
    std::string message = body.is_object() && body.contains("error") && body["error"].is_string() ? body["error"].get<std::string>() : reply->body;
    std::fprintf(stderr, "argus flight-recorder: %s (HTTP %d)\n", message.c_str(), reply->status);
    return 1;
  }
  if (!body.is_object() || !body.contains("sessions") || !body["sessions"].is_number_unsigned()) {
    std::fprintf(stderr, "argus flight-recorder: %s answered what this client cannot read: %s\n", o.server.c_str(), reply->body.c_str());
    return 1;
  }
  uint64_t n = body["sessions"].get<uint64_t>();
  std::printf("asked %llu rank%s of job %s for steps %llu-%llu; each writes argus-%s-rank<R>-steps%llu-%llu-<pid>.json into its "
              "ARGUS_DUMP_DIR (default: its working directory)\n",
              static_cast<unsigned long long>(n), n == 1 ? "" : "s", o.job.c_str(), static_cast<unsigned long long>(o.from_step),
              static_cast<unsigned long long>(o.to_step), o.job.c_str(), static_cast<unsigned long long>(o.from_step),
              static_cast<unsigned long long>(o.to_step));
  return 0;
}

}  // namespace

void addFlightRecorderCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<FlightRecorderOptions>();
  CLI::App* cmd = app.add_subcommand("flight-recorder", "Ask a running job's ranks to dump the raw events of a step range as Perfetto JSON");
  cmd->add_option("--server", o->server, "argusd HTTP address HOST:PORT")->required();
  cmd->add_option("--token", o->token, "control token for argusd --http-tokens (default: $ARGUS_HTTP_TOKEN)");
  cmd->add_option("--job", o->job, "job id")->required();
  cmd->add_option("--from-step", o->from_step, "first step (inclusive)")->required();
  cmd->add_option("--to-step", o->to_step, "last step (inclusive)")->required();
  cmd->add_option("--ranks", o->ranks, "comma-separated ranks (default: every connected rank)");
  cmd->callback([o, exit_code] { *exit_code = runFlightRecorder(*o); });
}

}  // namespace argus::cli
