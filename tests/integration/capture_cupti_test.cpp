// A preloaded shim takes cuptiActivityRegisterCallbacks, Enable and Disable from a library
// that loaded libcupti into a local scope, as Python loads PyTorch's Kineto, and passes them
// on to that libcupti: the client gets libcupti's own answers (on this driverless machine,
// its error codes), never the shim's "not initialized" for a libcupti it could not find.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <sstream>
#include <string>

#ifdef ARGUS_CUPTI_PRELOAD
TEST_CASE("a preloaded shim passes a locally loaded libcupti's Activity calls through to it") {
  std::string out;
  FILE* pipe = ::popen(ARGUS_CUPTI_PRELOAD " 2>&1", "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  int status = ::pclose(pipe);
  INFO(out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  std::istringstream lines(out);
  std::string what;
  lines >> what;
  REQUIRE(what == "global");
  std::string global;
  lines >> global;
  CHECK(global.ends_with("/libargus_capture.so"));  // the client's calls reach the shim first
  for (const char* call : {"register", "enable", "disable", "timestamp"}) {
    int through = -1, own = -2;
    lines >> what >> through >> own;
    CAPTURE(call);
    CHECK(what == call);
    CHECK(through == own);
  }
}
#endif
