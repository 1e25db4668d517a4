// TempDir: a fresh directory under $TMPDIR (else /tmp) for the spool tests, removed with the
// files in it when the test ends.
#pragma once

#include <dirent.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace argus::wire::testing {

struct TempDir {
  std::string path;
  explicit TempDir(const std::string& prefix) {
    const char* base = std::getenv("TMPDIR");
    std::string t = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + "-XXXXXX";
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    for (const auto& f : files()) ::unlink((path + "/" + f).c_str());
    ::rmdir(path.c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // The names in the directory, dot files left out.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    DIR* d = ::opendir(path.c_str());
    while (dirent* e = d != nullptr ? ::readdir(d) : nullptr) {
      if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    }
    if (d != nullptr) ::closedir(d);
    return out;
  }
};

}  // namespace argus::wire::testing
