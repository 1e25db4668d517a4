// HttpServer: the Boost.Beast transport in front of HttpRouter, sharing argusd's
// io_context. Limits (header and body size, idle timeout, open connections) are enforced
// before a request reaches the router; an oversized request gets 413 and the connection is
// closed. Requests are answered on a pool of query threads of their own, so a slow scan
// never stalls the io threads that ingest shares.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
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
  size_t max_connections = 1024;  // more get 503 and are closed
  int query_threads = 2;          // threads answering requests
};

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpRouter& router, HttpOptions options = {});
  ~HttpServer();
  // Binds and starts accepting. Port 0 picks a free port; returns the bound endpoint.
  Result<boost::asio::ip::tcp::endpoint> listen(const std::string& host, uint16_t port);
  // Stops accepting (safe while io threads run); open connections finish their current
  // request.
  void stop();

  struct Shared;  // what connections share with the server (router, limits, query pool)

 private:
  void accept();

  boost::asio::io_context& io_;
  std::shared_ptr<Shared> shared_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
};

}  // namespace argus::query
