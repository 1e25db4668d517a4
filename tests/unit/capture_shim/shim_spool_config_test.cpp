// The spool's environment (docs/capture/shim.md, "Environment"): ARGUS_SPOOL_DIR, else
// $TMPDIR, else /tmp; ARGUS_SPOOL_MAX_MB (0: no spool); ARGUS_SEND_BUFFER_RECORDS.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "capture/shim/shim_config.h"
#include "config_env.h"

using namespace argus::capture::shim;

namespace {

ShimConfig read(const std::map<std::string, std::string>& env, std::string* warnings) { return testing::readFromEnv(env, warnings); }

}  // namespace

TEST_CASE("spool defaults: /tmp, 1 GiB, 65536 records in memory") {
  std::string w;
  ShimConfig c = read({}, &w);
  CHECK(w.empty());
  CHECK(c.spool_dir == "/tmp");
  CHECK(c.spool_max_bytes == uint64_t{1} << 30);
  CHECK(c.send_buffer_records == 65536);
}

TEST_CASE("the spool directory: ARGUS_SPOOL_DIR first, then TMPDIR; empty values count as unset") {
  std::string w;
  CHECK(read({{"TMPDIR", "/scratch/tmp"}}, &w).spool_dir == "/scratch/tmp");
  CHECK(read({{"TMPDIR", "/scratch/tmp"}, {"ARGUS_SPOOL_DIR", "/local/argus"}}, &w).spool_dir == "/local/argus");
  CHECK(read({{"TMPDIR", "/scratch/tmp"}, {"ARGUS_SPOOL_DIR", ""}}, &w).spool_dir == "/scratch/tmp");
  CHECK(w.empty());
}

TEST_CASE("ARGUS_SPOOL_MAX_MB and ARGUS_SEND_BUFFER_RECORDS; 0 turns the spool off; bad values warn and fall back") {
  std::string w;
  ShimConfig c = read({{"ARGUS_SPOOL_MAX_MB", "0"}, {"ARGUS_SEND_BUFFER_RECORDS", "3"}}, &w);
  CHECK(w.empty());
  CHECK(c.spool_max_bytes == 0);
  CHECK(c.send_buffer_records == 3);
  c = read({{"ARGUS_SPOOL_MAX_MB", "250"}}, &w);
  CHECK(c.spool_max_bytes == uint64_t{250} << 20);

  c = read({{"ARGUS_SPOOL_MAX_MB", "lots"}, {"ARGUS_SEND_BUFFER_RECORDS", "0"}}, &w);
  CHECK(c.spool_max_bytes == uint64_t{1} << 30);
  CHECK(c.send_buffer_records == 65536);
  CHECK(w.find("ARGUS_SPOOL_MAX_MB=lots is not 0-16777216; using 1024\n") != std::string::npos);
  CHECK(w.find("ARGUS_SEND_BUFFER_RECORDS=0 is not 1-16777216; using 65536\n") != std::string::npos);
  w.clear();
  read({{"ARGUS_SPOOL_MAX_MB", "99999999999"}}, &w);
  CHECK(!w.empty());
}
