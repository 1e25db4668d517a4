// GzipStreamBuf: a read-only std::streambuf over a file that is gzipped or plain (zlib's
// gzread passes plain files through), so a JSON parser streams a trace of any size through
// a fixed buffer. It counts the uncompressed bytes handed out, for error positions and
// byte statistics, and keeps zlib's error (a truncated or corrupt gzip stream) instead of
// silently ending the stream.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <streambuf>
#include <string>
#include <vector>

namespace argus::import {

class GzipStreamBuf : public std::streambuf {
 public:
  explicit GzipStreamBuf(size_t buffer_bytes = 256 * 1024);
  ~GzipStreamBuf() override;
  GzipStreamBuf(const GzipStreamBuf&) = delete;
  GzipStreamBuf& operator=(const GzipStreamBuf&) = delete;

  // Returns false with error() set when the file cannot be opened.
  bool open(const std::string& path);
  // Uncompressed bytes consumed by the reader so far (the position of the next byte).
  uint64_t position() const { return delivered_ + static_cast<uint64_t>(gptr() - eback()); }
  // Compressed bytes read from the file so far (a file offset; for plain files == position
  // once read ahead is accounted).
  uint64_t compressedPosition() const;
  bool gzipped() const { return gzipped_; }
  // Non-empty once zlib reported an error (truncated or corrupt stream, I/O error).
  const std::string& error() const { return error_; }
  // Reads the rest of the stream (to count it and surface a late zlib error).
  void drain();

 protected:
  int_type underflow() override;

 private:
  gzFile file_ = nullptr;
  std::vector<char> buffer_;
  uint64_t delivered_ = 0;  // bytes of buffers fully handed out before the current one
  bool gzipped_ = false;
  std::string path_;
  std::string error_;
};

}  // namespace argus::import
