// POSIX TCP helpers for the wire layer: address parsing, connecting with a timeout, and
// FrameConnection, a blocking frame reader/writer used by StepSender's handshake, tools
// and tests. No Boost (linked into the capture shim).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "wire/frame.h"
#include "wire/messages.h"

namespace argus::wire {

// Splits "host:port" (or "[v6]:port"). InvalidArgument on a missing or bad port.
Status parseHostPort(std::string_view text, std::string* host, uint16_t* port);

// Connects a TCP socket (TCP_NODELAY, close-on-exec) within `timeout`.
// Returns the fd in blocking mode, or Unavailable naming the address and errno text.
Result<int> connectTcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

// Writes all of `bytes` to a blocking or non-blocking fd, waiting up to `timeout` in total.
// Never raises SIGPIPE.
Status writeAll(int fd, std::string_view bytes, std::chrono::milliseconds timeout);

// A connection that reads and writes whole frames. Owns its fd.
class FrameConnection {
 public:
  FrameConnection() = default;
  explicit FrameConnection(int fd) : fd_(fd) {}
  FrameConnection(FrameConnection&& other) noexcept : fd_(other.fd_), limits_(other.limits_), pending_(std::move(other.pending_)) { other.fd_ = -1; }
  FrameConnection& operator=(FrameConnection&& other) noexcept;
  FrameConnection(const FrameConnection&) = delete;
  FrameConnection& operator=(const FrameConnection&) = delete;
  ~FrameConnection() { close(); }

  static Result<FrameConnection> connect(const std::string& host, uint16_t port,
                                         std::chrono::milliseconds timeout = std::chrono::seconds(5));

  bool isOpen() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void setLimits(const FrameLimits& limits) { limits_ = limits; }

  Status write(std::string_view bytes, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    return writeAll(fd_, bytes, timeout);
  }
  // Reads one frame body. Unavailable("connection closed by peer") on a clean EOF between
  // frames, Corruption on EOF inside a frame, Aborted on timeout.
  Status readFrame(FrameBody* body, std::chrono::milliseconds timeout);
  // Reads and decodes one ServerMessage.
  Status readServerMessage(ServerMessage* out, std::chrono::milliseconds timeout);
  // Reads until the peer closes the connection, discarding data; true if EOF came in time.
  bool waitForEof(std::chrono::milliseconds timeout);
  void shutdownWrite();
  void close();
  // Gives up ownership of the fd without closing it.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  Status readExact(uint8_t* out, size_t n, std::chrono::steady_clock::time_point deadline, bool* eof_at_start);
  int fd_ = -1;
  FrameLimits limits_;
  std::string pending_;  // bytes read past the previous frame
};

}  // namespace argus::wire
