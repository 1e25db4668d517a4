#include "query/http/http_server.h"

#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/version.hpp>

namespace argus::query {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// One keep-alive connection: read a request within the limits, route it, write, repeat.
class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(tcp::socket socket, HttpRouter& router, const HttpOptions& options)
      : stream_(std::move(socket)), router_(router), options_(options) {}

  void start() { readRequest(); }

 private:
  void readRequest() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(options_.max_header_bytes));
    parser_->body_limit(options_.max_body_bytes);
    stream_.expires_after(options_.idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->onRead(ec); });
  }

  void onRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted) {
      return close();
    }
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      router_.countRefusal(413);
      return writeError(http::status::payload_too_large, "request larger than the server's limit");
    }
    if (ec) {
      router_.countRefusal(400);
      return writeError(http::status::bad_request, "malformed HTTP request: " + ec.message());
    }
    http::request<http::string_body> req = parser_->release();
    HttpRequest request{std::string(req.method_string()), std::string(req.target()), std::move(req.body())};
    HttpResponse answer = router_.handle(request);
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(answer.status), req.version());
    res->set(http::field::server, "argusd");
    res->set(http::field::content_type, answer.content_type);
    res->keep_alive(req.keep_alive());
    res->body() = std::move(answer.body);
    res->prepare_payload();
    write(res);
  }

  void writeError(http::status status, const std::string& message) {
    auto res = std::make_shared<http::response<http::string_body>>(status, 11);
    res->set(http::field::server, "argusd");
    res->set(http::field::content_type, "application/json");
    res->keep_alive(false);
    std::string body = "{\"error\":\"";
    for (char c : message) body += (c == '"' || c == '\\') ? ' ' : c;
    body += "\"}";
    res->body() = std::move(body);
    res->prepare_payload();
    write(res);
  }

  void write(std::shared_ptr<http::response<http::string_body>> res) {
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
      if (ec || !res->keep_alive()) return self->close();
      self->readRequest();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpRouter& router_;
  const HttpOptions& options_;
};

}  // namespace

HttpServer::HttpServer(asio::io_context& io, HttpRouter& router, HttpOptions options)
    : io_(io), router_(router), options_(options), acceptor_(io) {}

HttpServer::~HttpServer() { stop(); }

Result<tcp::endpoint> HttpServer::listen(const std::string& host, uint16_t port) {
  boost::system::error_code ec;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) return Status::invalidArgument("http: bad listen address '" + host + "': " + ec.message());
  tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::ioError("http: cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  accept();
  return acceptor_.local_endpoint();
}

void HttpServer::stop() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

void HttpServer::accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) std::make_shared<HttpConnection>(std::move(socket), router_, options_)->start();
    accept();
  });
}

}  // namespace argus::query
