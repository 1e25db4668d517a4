// HttpServer in-process: connection cap, and answers while the io thread stays free.
#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <filesystem>
#include <thread>

#include "query/http/http_server.h"
#include "storage/store.h"

using namespace argus;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// Sends one GET on `socket` and returns the whole answer (the server closes or keeps alive;
// we read what arrives within the first response).
std::string roundTrip(tcp::socket& socket, const std::string& target) {
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  asio::write(socket, asio::buffer(request));
  std::string answer;
  boost::system::error_code ec;
  char buf[4096];
  for (;;) {
    size_t n = socket.read_some(asio::buffer(buf), ec);
    answer.append(buf, n);
    if (ec) break;
  }
  return answer;
}

}  // namespace

TEST_CASE("HTTP connections past the cap get 503, the others are served") {
  std::string dir = (std::filesystem::temp_directory_path() / ("argus-http-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  auto store = storage::Store::open(dir);
  REQUIRE(store.isOk());
  query::HttpRouter router(**store, nullptr);
  asio::io_context io;
  query::HttpOptions options;
  options.max_connections = 2;
  query::HttpServer server(io, router, options);
  auto endpoint = server.listen("127.0.0.1", 0);
  REQUIRE(endpoint.isOk());
  auto guard = asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });

  asio::io_context client_io;
  std::vector<tcp::socket> held;
  for (int i = 0; i < 2; ++i) {
    held.emplace_back(client_io);
    held.back().connect(*endpoint);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both accepted
  tcp::socket third(client_io);
  third.connect(*endpoint);
  std::string refused = roundTrip(third, "/healthz");
  CHECK(refused.find("503") != std::string::npos);
  CHECK(refused.find("too many HTTP connections") != std::string::npos);

  std::string ok = roundTrip(held[0], "/healthz");
  CHECK(ok.find("200 OK") != std::string::npos);
  CHECK(ok.find("ok\n") != std::string::npos);

  server.stop();
  held.clear();
  guard.reset();
  io.stop();
  io_thread.join();
  store->reset();
  std::filesystem::remove_all(dir);
}
