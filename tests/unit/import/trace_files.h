// Temporary trace files for the import tests: unique paths under $TMPDIR (one process per
// test file, so the pid keeps parallel test runs apart), plain or gzipped bytes.
#pragma once

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace argus::testing {

inline std::string tempPath(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/argus-import-" + std::to_string(::getpid()) + "-" + name;
}

// Every path writeFile wrote, removed when the test process exits.
struct WrittenFiles {
  std::vector<std::string> paths;
  ~WrittenFiles() {
    for (const std::string& p : paths) std::remove(p.c_str());
  }
};

// Writes `bytes` to tempPath(name) and returns the path.
inline std::string writeFile(const std::string& name, const std::string& bytes) {
  static WrittenFiles written;
  std::string path = tempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  written.paths.push_back(path);
  return path;
}

// The gzip file bytes holding `text` (zlib's gzwrite, as gzip(1) would write them).
inline std::string gzipped(const std::string& text) {
  std::string path = tempPath("gzipped.tmp.gz");
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  return bytes;
}

}  // namespace argus::testing
