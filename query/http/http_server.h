// HttpServer: the Boost.Beast transport in front of HttpRouter, sharing argusd's
// io_context. Limits (header and body size, idle timeout) are enforced before a request
// reaches the router; an oversized request gets 413 and the connection is closed.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "base/status.h"
#include "query/http/http_router.h"

namespace argus::query {

struct HttpOptions {
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 1024 * 1024;
  std::chrono::seconds idle_timeout{30};
};

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpRouter& router, HttpOptions options = {});
  ~HttpServer();
  // Binds and starts accepting. Port 0 picks a free port; returns the bound endpoint.
  Result<boost::asio::ip::tcp::endpoint> listen(const std::string& host, uint16_t port);
  // Stops accepting; open connections finish their current request.
  void stop();

 private:
  void accept();

  boost::asio::io_context& io_;
  HttpRouter& router_;
  HttpOptions options_;
  boost::asio::ip::tcp::acceptor acceptor_;
};

}  // namespace argus::query
