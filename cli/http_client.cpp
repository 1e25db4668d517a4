#include "cli/http_client.h"

#include <cstdlib>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace argus::cli {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

Result<HttpReply> httpRequest(const std::string& host, uint16_t port, const std::string& method,
                              const std::string& target, const std::string& body,
                              std::chrono::milliseconds timeout, const std::string& bearer_token,
                              const std::atomic<bool>* cancel) {
  const std::string where = "http://" + host + ":" + std::to_string(port) + target;
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code ec;
  tcp::resolver resolver(io);
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return Status::unavailable("cannot resolve " + host + ": " + ec.message());

  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, host);
  req.set(http::field::user_agent, "argus-cli");
  if (!bearer_token.empty()) req.set(http::field::authorization, "Bearer " + bearer_token);
  if (!body.empty()) {
    req.set(http::field::content_type, "application/json");
    req.body() = body;
  }
  req.prepare_payload();

  http::response<http::string_body> res;
  beast::flat_buffer buffer;
  // The deadline covers connect, write and read together: run the async chain on our own
  // io_context so an unresponsive server costs at most `timeout`.
  stream.expires_after(timeout);
  stream.async_connect(endpoints, [&](beast::error_code connect_ec, const tcp::endpoint&) {
    if (connect_ec) {
      ec = connect_ec;
      return;
    }
    http::async_write(stream, req, [&](beast::error_code write_ec, size_t) {
      if (write_ec) {
        ec = write_ec;
        return;
      }
      http::async_read(stream, buffer, res, [&](beast::error_code read_ec, size_t) { ec = read_ec; });
    });
  });
  // Run in slices so that `cancel` is seen within one of them; closing the stream aborts
  // the pending operation, and the server sees the close (it stops the query).
  while (!io.stopped()) {
    io.run_for(std::chrono::milliseconds(50));
    if (cancel && cancel->load() && !io.stopped()) {
      stream.close();
      io.run();
      return Status::aborted(method + " " + where + ": cancelled");
    }
  }
  if (ec == beast::error::timeout) return Status::unavailable(method + " " + where + ": no answer within deadline");
  if (ec) return Status::unavailable(method + " " + where + ": " + ec.message());
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return HttpReply{static_cast<int>(res.result_int()), std::move(res.body())};
}

std::string httpToken(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("ARGUS_HTTP_TOKEN");
  return env ? env : "";
}

}  // namespace argus::cli
