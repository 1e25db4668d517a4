#include "import/gzip_streambuf.h"

#include <cerrno>
#include <cstring>

namespace argus::import {

namespace {

// zlib's messages start with the path ("f.gz: unexpected end of file"); callers name it.
std::string withoutPath(const char* message, const std::string& path) {
  std::string m = message;
  if (m.rfind(path + ": ", 0) == 0) m.erase(0, path.size() + 2);
  return m;
}

}  // namespace

GzipStreamBuf::GzipStreamBuf(size_t buffer_bytes) : buffer_(buffer_bytes) { setg(buffer_.data(), buffer_.data(), buffer_.data()); }

GzipStreamBuf::~GzipStreamBuf() {
  if (file_ != nullptr) gzclose(file_);
}

bool GzipStreamBuf::open(const std::string& path) {
  errno = 0;
  path_ = path;
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    error_ = std::string("cannot open: ") + (errno != 0 ? std::strerror(errno) : "out of memory");
    return false;
  }
  gzbuffer(file_, 128 * 1024);
  return true;
}

uint64_t GzipStreamBuf::compressedPosition() const {
  if (file_ == nullptr) return 0;
  z_off_t off = gzoffset(file_);
  return off < 0 ? 0 : static_cast<uint64_t>(off);
}

GzipStreamBuf::int_type GzipStreamBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  delivered_ += static_cast<uint64_t>(egptr() - eback());
  setg(buffer_.data(), buffer_.data(), buffer_.data());
  if (file_ == nullptr || !error_.empty()) return traits_type::eof();
  int n = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
  if (delivered_ == 0 && n > 0) gzipped_ = gzdirect(file_) == 0;
  if (n < 0) {
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    error_ = code == Z_ERRNO ? std::string("read error: ") + std::strerror(errno) : std::string("gzip: ") + withoutPath(message, path_);
    return traits_type::eof();
  }
  if (n == 0) {
    // gzread reports a stream cut short as 0 bytes plus an error (Z_BUF_ERROR).
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    if (code != Z_OK && code != Z_STREAM_END) error_ = std::string("gzip: ") + withoutPath(message, path_);
    return traits_type::eof();
  }
  setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
  return traits_type::to_int_type(*gptr());
}

void GzipStreamBuf::drain() {
  while (underflow() != traits_type::eof()) setg(eback(), egptr(), egptr());
}

}  // namespace argus::import
