// A small blocking HTTP/1.1 client for the CLI (demo, shell against a server): one request
// per connection, with a deadline so a server that goes away gives an error, not a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace argus::cli {

struct HttpReply {
  int status = 0;
  std::string body;
};

// `bearer_token` non-empty: sent as `Authorization: Bearer TOKEN` (argusd --http-tokens).
// `cancel` (may be null) set by another thread or a signal handler: the request is abandoned
// within 50 ms, its connection closed, and the result is Aborted.
Result<HttpReply> httpRequest(const std::string& host, uint16_t port, const std::string& method,
                              const std::string& target, const std::string& body = {},
                              std::chrono::milliseconds timeout = std::chrono::seconds(30),
                              const std::string& bearer_token = {}, const std::atomic<bool>* cancel = nullptr);

// The bearer token for argusd's HTTP API: `flag` when given, else $ARGUS_HTTP_TOKEN (kept out
// of the command line, where other users' `ps` sees it), else empty.
std::string httpToken(const std::string& flag);

}  // namespace argus::cli
