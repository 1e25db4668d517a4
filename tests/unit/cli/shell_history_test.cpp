#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

#include "cli/argusd_process.h"
#include "cli/shell_history.h"

using argus::cli::ShellHistory;

TEST_CASE("history survives a restart: multi-line entries, backslashes, the newest 1,000") {
  std::string dir = argus::cli::makeTempDir("argus-history");
  std::string path = dir + "/history";
  {
    ShellHistory h(path);
    CHECK(h.entries().empty());
    h.add("SELECT 1;");
    h.add("SELECT 1;");  // repeats the newest: kept once
    h.add("");
    h.add("SELECT\n  'a\\nb';");
    CHECK(h.entries().size() == 2);
  }
  {
    ShellHistory h(path);
    REQUIRE(h.entries().size() == 2);
    CHECK(h.entries()[1] == "SELECT\n  'a\\nb';");
    for (int i = 0; i < 1200; ++i) h.add("SELECT " + std::to_string(i) + ";");
    CHECK(h.entries().size() == ShellHistory::kMaxEntries);
  }
  ShellHistory h(path);
  REQUIRE(h.entries().size() == ShellHistory::kMaxEntries);
  CHECK(h.entries().front() == "SELECT 200;");
  CHECK(h.entries().back() == "SELECT 1199;");
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  CHECK(first == "SELECT 200;");
  argus::cli::removeTree(dir);
}

TEST_CASE("ARGUS_HISTORY names the file") {
  ::setenv("ARGUS_HISTORY", "/tmp/somewhere", 1);
  CHECK(ShellHistory::defaultPath() == "/tmp/somewhere");
  ::unsetenv("ARGUS_HISTORY");
  ::setenv("HOME", "/home/x", 1);
  CHECK(ShellHistory::defaultPath() == "/home/x/.argus_history");
}
