// The real-trace part of `argus eval` on damaged input: a folder whose traces do not parse
// is reported and scored as a failure; the other folders are still imported and diagnosed.
#include "cli/trace_eval.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/trace_kernel_mix.h"

using namespace argus;

namespace {

std::string readAll(FILE* f) {
  std::string out;
  std::rewind(f);
  char b[4096];
  for (size_t n; (n = std::fread(b, 1, sizeof b, f)) > 0;) out.append(b, n);
  return out;
}

}  // namespace

TEST_CASE("eval on real traces: a damaged folder fails the run, the sound one is still scored") {
  const std::filesystem::path hta = std::filesystem::path(cli::sharedDataDir()) / "kineto" / "hta-sampled-128rank";
  if (!std::filesystem::exists(hta)) {
    MESSAGE("no shared traces at " << hta.string() << ": skipped");
    return;
  }
  char tmpl[] = "/tmp/argus-trace-eval-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::filesystem::path root(tmpl);
  std::filesystem::create_directories(root / "kineto" / "broken");
  std::ofstream(root / "kineto" / "broken" / "rank-0.json.gz") << "not gzip at all";
  std::ofstream(root / "kineto" / "broken" / "rank-1.json.gz") << "\x1f\x8b\x08\x00truncated";
  std::filesystem::create_directory_symlink(hta, root / "kineto" / "hta");

  cli::TraceEvalOptions o;
  o.kineto_dir = (root / "kineto").string();
  o.work_dir = root.string();
  FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  const cli::TraceEvalResult r = cli::runTraceEval(o, out);
  const std::string printed = readAll(out);
  std::fclose(out);
  INFO(printed);
  CHECK_FALSE(r.ok);
  CHECK(r.slowed == 0);  // two ranks: too few to judge one against its peers
  CHECK(printed.find("hta") != std::string::npos);
  CHECK(printed.find("broken") == std::string::npos);
  std::filesystem::remove_all(root);
}
