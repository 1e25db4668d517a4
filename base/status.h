// Status and Result<T>: how storage, wire and ingest report failure (LevelDB style).
// A Status is cheap when OK (no allocation); an error carries a code and a message
// that a person can act on ("chunk checksum mismatch at key ...").
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace argus {

class Status {
 public:
  // Do not renumber: codes are written into wire Close messages.
  enum class Code : uint8_t {
    kOk = 0,
    kNotFound = 1,
    kCorruption = 2,
    kInvalidArgument = 3,
    kIoError = 4,
    kPermissionDenied = 5,
    kUnavailable = 6,
    kResourceExhausted = 7,
    kVersionMismatch = 8,
    kAborted = 9,
  };

  Status() = default;
  static Status ok() { return Status(); }
  static Status notFound(std::string_view m) { return Status(Code::kNotFound, m); }
  static Status corruption(std::string_view m) { return Status(Code::kCorruption, m); }
  static Status invalidArgument(std::string_view m) { return Status(Code::kInvalidArgument, m); }
  static Status ioError(std::string_view m) { return Status(Code::kIoError, m); }
  static Status permissionDenied(std::string_view m) { return Status(Code::kPermissionDenied, m); }
  static Status unavailable(std::string_view m) { return Status(Code::kUnavailable, m); }
  static Status resourceExhausted(std::string_view m) { return Status(Code::kResourceExhausted, m); }
  static Status versionMismatch(std::string_view m) { return Status(Code::kVersionMismatch, m); }
  static Status aborted(std::string_view m) { return Status(Code::kAborted, m); }
  static Status fromCode(Code code, std::string_view m) { return code == Code::kOk ? Status() : Status(code, m); }

  bool isOk() const { return state_ == nullptr; }
  explicit operator bool() const { return isOk(); }
  Code code() const { return state_ ? state_->code : Code::kOk; }
  const std::string& message() const {
    static const std::string kEmpty;
    return state_ ? state_->message : kEmpty;
  }
  bool isCorruption() const { return code() == Code::kCorruption; }
  bool isNotFound() const { return code() == Code::kNotFound; }

  // Returns "OK" or "<Code name>: <message>".
  std::string toString() const;
  static const char* codeName(Code code);

  // Returns a copy with "context: " prefixed to the message (no-op when OK).
  Status withContext(std::string_view context) const {
    if (isOk()) return *this;
    return Status(code(), std::string(context) + ": " + message());
  }

 private:
  struct State {
    Code code;
    std::string message;
  };
  Status(Code code, std::string_view m) : state_(std::make_shared<State>(State{code, std::string(m)})) {}
  std::shared_ptr<const State> state_;
};

inline const char* Status::codeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kNotFound: return "NotFound";
    case Code::kCorruption: return "Corruption";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kIoError: return "IOError";
    case Code::kPermissionDenied: return "PermissionDenied";
    case Code::kUnavailable: return "Unavailable";
    case Code::kResourceExhausted: return "ResourceExhausted";
    case Code::kVersionMismatch: return "VersionMismatch";
    case Code::kAborted: return "Aborted";
  }
  return "Unknown";
}

inline std::string Status::toString() const {
  if (isOk()) return "OK";
  return std::string(codeName(code())) + ": " + message();
}

// Result<T>: a value or a non-OK Status.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.isOk() && "Result constructed from an OK status without a value");
  }
  bool isOk() const { return status_.isOk(); }
  explicit operator bool() const { return isOk(); }
  const Status& status() const { return status_; }
  T& value() & { assert(isOk()); return *value_; }
  const T& value() const& { assert(isOk()); return *value_; }
  T&& value() && { assert(isOk()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace argus

// Returns early from the enclosing function when the expression is not OK.
#define ARGUS_RETURN_IF_ERROR(expr)            \
  do {                                         \
    ::argus::Status argus_status_ = (expr);    \
    if (!argus_status_.isOk()) return argus_status_; \
  } while (0)
