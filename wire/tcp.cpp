// POSIX TCP helpers (see tcp.h).
#include "wire/tcp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace argus::wire {

namespace {

using Clock = std::chrono::steady_clock;

int msUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left < 0) return 0;
  return left > 1000000 ? 1000000 : static_cast<int>(left);
}

std::string errnoText(int err) { return std::strerror(err); }

}  // namespace

Status parseHostPort(std::string_view text, std::string* host, uint16_t* port) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return Status::invalidArgument("expected HOST:PORT, got '" + std::string(text) + "'");
  }
  std::string_view h = text.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  std::string_view p = text.substr(colon + 1);
  uint32_t value = 0;
  for (char c : p) {
    if (c < '0' || c > '9' || value > 65535) return Status::invalidArgument("bad port in '" + std::string(text) + "'");
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value > 65535) return Status::invalidArgument("port out of range in '" + std::string(text) + "'");
  *host = std::string(h);
  *port = static_cast<uint16_t>(value);
  return Status::ok();
}

Result<int> connectTcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* list = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  if (rc != 0) return Status::unavailable("cannot resolve " + host + ": " + gai_strerror(rc));
  std::string where = host + ":" + service;
  Status last = Status::unavailable("no address for " + where);
  auto deadline = Clock::now() + timeout;
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      last = Status::unavailable("socket() for " + where + ": " + errnoText(errno));
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, msUntil(deadline));
      if (rc == 0) {
        ::close(fd);
        last = Status::unavailable("connect to " + where + " timed out");
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (rc < 0) err = errno;
      if (err != 0) {
        ::close(fd);
        last = Status::unavailable("connect to " + where + ": " + errnoText(err));
        continue;
      }
    } else if (rc != 0) {
      int err = errno;
      ::close(fd);
      last = Status::unavailable("connect to " + where + ": " + errnoText(err));
      continue;
    }
    int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    ::freeaddrinfo(list);
    return fd;
  }
  ::freeaddrinfo(list);
  return last;
}

Status writeAll(int fd, std::string_view bytes, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::send(fd, p, left, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      left -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd{fd, POLLOUT, 0};
      int rc = ::poll(&pfd, 1, msUntil(deadline));
      if (rc == 0) return Status::aborted("write timed out with " + std::to_string(left) + " bytes left");
      continue;
    }
    return Status::unavailable("write failed: " + errnoText(errno));
  }
  return Status::ok();
}

FrameConnection& FrameConnection::operator=(FrameConnection&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    limits_ = other.limits_;
    pending_ = std::move(other.pending_);
    other.fd_ = -1;
  }
  return *this;
}

Result<FrameConnection> FrameConnection::connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  auto fd = connectTcp(host, port, timeout);
  if (!fd.isOk()) return fd.status();
  return FrameConnection(fd.value());
}

Status FrameConnection::readExact(uint8_t* out, size_t n, Clock::time_point deadline, bool* eof_at_start) {
  size_t got = 0;
  if (!pending_.empty()) {
    size_t take = std::min(n, pending_.size());
    std::memcpy(out, pending_.data(), take);
    pending_.erase(0, take);
    got = take;
  }
  while (got < n) {
    pollfd pfd{fd_, POLLIN, 0};
    int rc = ::poll(&pfd, 1, msUntil(deadline));
    if (rc == 0) return Status::aborted("read timed out");
    if (rc < 0) {
      if (errno == EINTR) continue;
      return Status::unavailable("poll failed: " + errnoText(errno));
    }
    ssize_t r = ::recv(fd_, out + got, n - got, MSG_DONTWAIT);
    if (r == 0) {
      if (got == 0 && eof_at_start != nullptr) *eof_at_start = true;
      return got == 0 ? Status::unavailable("connection closed by peer")
                      : Status::corruption("connection closed inside a frame");
    }
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return Status::unavailable("read failed: " + errnoText(errno));
    }
    got += static_cast<size_t>(r);
  }
  return Status::ok();
}

Status FrameConnection::readFrame(FrameBody* body, std::chrono::milliseconds timeout) {
  if (fd_ < 0) return Status::unavailable("connection is closed");
  auto deadline = Clock::now() + timeout;
  uint8_t header[kFrameHeaderBytes];
  bool eof = false;
  Status s = readExact(header, sizeof header, deadline, &eof);
  if (!s.isOk()) return s;
  uint32_t n = 0;
  ARGUS_RETURN_IF_ERROR(parseFrameHeader(header, limits_, &n));
  return readExact(body->prepare(n), n, deadline, nullptr);
}

Status FrameConnection::readServerMessage(ServerMessage* out, std::chrono::milliseconds timeout) {
  FrameBody body;
  ARGUS_RETURN_IF_ERROR(readFrame(&body, timeout));
  return decodeServerMessage(body, limits_, out);
}

bool FrameConnection::waitForEof(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  char buf[4096];
  while (fd_ >= 0) {
    pollfd pfd{fd_, POLLIN, 0};
    int rc = ::poll(&pfd, 1, msUntil(deadline));
    if (rc == 0) return false;
    ssize_t r = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (r == 0) return true;
    if (r < 0 && errno != EINTR && errno != EAGAIN) return true;  // reset counts as closed
  }
  return true;
}

void FrameConnection::shutdownWrite() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

void FrameConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pending_.clear();
}

}  // namespace argus::wire
