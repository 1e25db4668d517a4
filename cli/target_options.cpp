#include "cli/target_options.h"

#include <chrono>
#include <cstdio>

#include "cli/duration_text.h"
#include "cli/http_client.h"
#include "wire/tcp.h"

namespace argus::cli {

std::string TargetOptions::where() const {
  return server.empty() ? data_dir + " (embedded, as of now)" : "argusd at " + server;
}

void addTargetOptions(CLI::App* cmd, TargetOptions* o) {
  cmd->add_option("--data", o->data_dir, "data directory, opened read-only (argusd may keep running on it)");
  cmd->add_option("--server", o->server, "argusd HTTP address HOST:PORT");
  cmd->add_option("--token", o->token, "bearer token for argusd --http-tokens (default: $ARGUS_HTTP_TOKEN)");
  cmd->add_option("--format", o->format, "table, csv or json")->capture_default_str();
  cmd->add_option("--timeout", o->timeout, "deadline of each statement (250ms, 30s, 2m)")->capture_default_str();
}

int openTarget(const TargetOptions& o, const char* command, OpenedTarget* out) {
  auto fail = [command](int code, const std::string& why) {
    std::fprintf(stderr, "argus %s: %s\n", command, why.c_str());
    return code;
  };
  if (o.data_dir.empty() == o.server.empty()) return fail(2, "give exactly one of --data DIR and --server HOST:PORT");
  if (!parseOutputFormat(o.format, &out->format)) return fail(2, "--format must be table, csv or json");
  auto timeout = parseDurationNs(o.timeout);
  if (!timeout.isOk()) return fail(2, "--timeout: " + timeout.status().message());
  out->options.deadline = std::chrono::nanoseconds(*timeout);
  std::string host;
  uint16_t port = 0;
  if (Status s = wire::parseHostPort(o.server, &host, &port); !o.server.empty() && !s.isOk()) return fail(2, "--server: " + s.message());
  auto target = o.server.empty() ? QueryTarget::openData(o.data_dir) : QueryTarget::connect(o.server, httpToken(o.token));
  if (!target.isOk()) return fail(1, target.status().message());
  out->target = std::move(*target);
  return 0;
}

}  // namespace argus::cli
