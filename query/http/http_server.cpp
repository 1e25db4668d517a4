#include "query/http/http_server.h"

#include <sys/socket.h>

#include <atomic>
#include <cerrno>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/version.hpp>

namespace argus::query {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct HttpServer::Shared {
  Shared(HttpRouter& r, const HttpOptions& o) : router(r), options(o), pool(static_cast<size_t>(std::max(1, o.query_threads))) {}
  ~Shared() { pool.join(); }
  HttpRouter& router;
  const HttpOptions options;
  asio::thread_pool pool;
  std::atomic<size_t> connections{0};
};

namespace {

// One keep-alive connection: read a request within the limits, route it on the query
// pool, write the answer on the connection's strand, repeat.
class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(tcp::socket socket, std::shared_ptr<HttpServer::Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)), router_(shared_->router), options_(shared_->options) {
    shared_->connections++;
  }
  ~HttpConnection() { shared_->connections--; }

  void start() {
    if (shared_->connections > options_.max_connections) {
      router_.countRefusal(503);
      return writeError(http::status::service_unavailable, "too many HTTP connections");
    }
    readRequest();
  }

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
    auto req = std::make_shared<http::request<http::string_body>>(parser_->release());
    auto watch = std::make_shared<CloseWatch>();
    watchForClose(watch);
    // The router may scan for a long time: answer on the query pool, write on our strand.
    asio::post(shared_->pool, [self = shared_from_this(), req, watch] {
      HttpRequest request{std::string(req->method_string()), std::string(req->target()), std::move(req->body()),
                          std::string((*req)[http::field::authorization]), &watch->client_gone};
      auto answer = std::make_shared<HttpResponse>(self->router_.handle(request));
      asio::post(self->stream_.get_executor(), [self, req, answer, watch] {
        watch->answered = true;
        beast::error_code ignored;
        self->stream_.socket().cancel(ignored);  // ends watchForClose's wait
        auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(answer->status), req->version());
        res->set(http::field::server, "argusd");
        res->set(http::field::content_type, answer->content_type);
        for (const auto& [name, value] : answer->headers) res->set(name, value);
        res->keep_alive(req->keep_alive());
        res->body() = std::move(answer->body);
        res->prepare_payload();
        self->write(res);
      });
    });
  }

  // One request's watch for its client going away. `answered` is touched on the strand only.
  struct CloseWatch {
    std::atomic<bool> client_gone{false};
    bool answered = false;
  };

  // While the request is answered, a readable socket whose peek reads 0 bytes (or an
  // error) means the client closed or reset it: flag the query to stop. Bytes of a
  // pipelined next request stay unread, and the watch ends there (the query goes on). A
  // wakeup with nothing to read (an edge-triggered event another io thread took late)
  // waits again.
  void watchForClose(const std::shared_ptr<CloseWatch>& watch) {
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(), watch](beast::error_code ec) {
      if (ec || watch->answered) return;  // cancelled: the answer is ready
      char byte;
      ssize_t n = ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n > 0) return;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return self->watchForClose(watch);
      watch->client_gone.store(true);
    });
  }

  void writeError(http::status status, const std::string& message) {
    auto res = std::make_shared<http::response<http::string_body>>(status, 11);
    res->set(http::field::server, "argusd");
    res->set(http::field::content_type, "application/json");
    res->keep_alive(false);
    res->body() = jsonError(static_cast<int>(status), message).body;
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
  std::shared_ptr<HttpServer::Shared> shared_;
  HttpRouter& router_;
  const HttpOptions& options_;
};

}  // namespace

HttpServer::HttpServer(asio::io_context& io, HttpRouter& router, HttpOptions options)
    : io_(io), shared_(std::make_shared<Shared>(router, options)), strand_(asio::make_strand(io)), acceptor_(strand_) {}

// REQUIRES: the io threads have stopped (argusd shuts ingest down first).
HttpServer::~HttpServer() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

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
  // The acceptor lives on strand_: closing it there cannot race an accept being re-armed.
  asio::dispatch(strand_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
}

void HttpServer::accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) std::make_shared<HttpConnection>(std::move(socket), shared_)->start();
    accept();
  });
}

}  // namespace argus::query
