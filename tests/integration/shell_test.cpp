// argus shell fed through a pipe, as scripts run it: embedded on argusd's data directory and
// against the running argusd over HTTP (statements over several lines, several on one line,
// `;` in literals and comments, every meta-command, an error and the statements after it),
// then argusd killed in the middle of a session.
#include <doctest/doctest.h>

#include <fstream>
#include <thread>

#include "tests/integration/ingest_test_util.h"

using namespace argus;
using argus::testing::RunResult;
using argus::testing::runArgus;

namespace {

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// Runs `argus shell ARGS` with `script` on its stdin (a file, so not a terminal).
RunResult runShell(const std::string& args, const std::string& script, bool with_stderr = true) {
  std::string dir = cli::makeTempDir("argus-shell-script");
  std::ofstream(dir + "/script.sql") << script;
  RunResult r = runArgus("shell " + args + " < " + dir + "/script.sql", with_stderr);
  cli::removeTree(dir);
  return r;
}

const char* kScript = R"(SELECT rank, count(*) AS n
FROM steps
  WHERE job = 'shell'   -- a comment; with a semicolon
GROUP BY rank ORDER BY rank;
SELECT 'a;b' AS s; SELECT 'it''s; "fine"' /* ; */ AS t;
SELECT nope FROM steps;
SELECT count(*) AS after_error FROM steps WHERE job = 'shell';
\timing on
SELECT 1 AS one;
\timing off
\format csv
SELECT rank, max(step) AS last FROM steps GROUP BY rank ORDER BY rank;
\format json
SELECT 2 AS two;
\format table
\tables
\functions
\describe kernels
\describe nope
\help
\bogus
\q
SELECT 'never runs';
)";

void checkScript(const RunResult& r) {
  INFO(r.output);
  CHECK(r.exit_code == 1);  // a statement failed
  CHECK(contains(r.output, "  rank  n\n  ----  --\n     0  10\n     1  10\n     2  10\n(3 rows)\n"));
  CHECK(contains(r.output, "  a;b\n(1 row)\n"));
  CHECK(contains(r.output, "  it's; \"fine\"\n(1 row)\n"));
  CHECK(contains(r.output, "binder error at 1:8: no column 'nope' in table steps\n  SELECT nope FROM steps\n         ^\n"));
  CHECK(contains(r.output, "  after_error\n  -----------\n           30\n(1 row)\n"));
  CHECK(contains(r.output, "Timing is on.\n"));
  CHECK(contains(r.output, "(1 row)\nTime: "));
  CHECK(contains(r.output, "Timing is off.\nFormat is csv.\nrank,last\r\n0,9\r\n1,9\r\n2,9\r\nFormat is json.\n{\"columns\":[{\"name\":\"two\",\"type\":\"BIGINT\"}],\"rows\":[[2]]"));
  CHECK(contains(r.output, "  collectives   collectives and point-to-point"));
  CHECK(contains(r.output, "  ranks         each job's topology"));
  CHECK(contains(r.output, "  kernel_names  each job's kernel dictionary"));
  CHECK(contains(r.output, "  recent_steps(job VARCHAR, last BIGINT = 100, ranks VARCHAR = NULL)  "));
  CHECK(contains(r.output, "  signature  ID\n"));
  CHECK(contains(r.output, "  hist       HISTOGRAM\n"));
  CHECK(contains(r.output, "no table 'nope'"));
  CHECK_FALSE(contains(r.output, "SELECT * FROM nope"));  // no caret into the shell's own statement
  CHECK(contains(r.output, "\\describe TABLE"));
  CHECK(contains(r.output, "unknown meta-command '\\bogus'; \\help lists them\n"));
  CHECK_FALSE(contains(r.output, "never runs"));
  // Timing is printed once, for the one statement while it was on.
  CHECK(r.output.find("Time: ") == r.output.rfind("Time: "));
}

}  // namespace

TEST_CASE("argus shell through a pipe, embedded and against argusd") {
  testing::ArgusdProcess argusd;
  argusd.setHttp(true);
  REQUIRE(argusd.start().isOk());
  for (uint32_t rank = 0; rank < 3; ++rank) {
    testing::SyntheticSteps gen(rank, 4);
    wire::StepSender sender(testing::senderOptions(argusd.ingestPort(), "shell", rank));
    testing::addDictionary(sender, gen);
    for (int i = 0; i < 10; ++i) REQUIRE(sender.send(gen.next()).isOk());
    REQUIRE(sender.close(std::chrono::seconds(30)).isOk());
  }
  const std::string data = "--data " + argusd.dataDir();
  const std::string server = "--server 127.0.0.1:" + std::to_string(argusd.httpPort());

  SUBCASE("embedded") { checkScript(runShell(data, kScript)); }
  SUBCASE("against argusd") { checkScript(runShell(server, kScript)); }
  SUBCASE("csv and json are what argus query prints") {
    const std::string sql = "SELECT rank, step, iter_ns, 'x,y' AS s, NULL AS z FROM steps WHERE step < 3 ORDER BY rank, step";
    for (const std::string& where : {data, server}) {
      RunResult csv = runShell(where + " --format csv", sql + ";\n", false);
      CHECK(csv.exit_code == 0);
      CHECK(csv.output == runArgus("query " + where + " --format csv \"" + sql + "\"", false).output);
    }
    // JSON differs only in the stats' timings: compare the rows.
    RunResult json = runShell(server, "\\format json\n" + sql + ";\n", false);
    RunResult query = runArgus("query " + server + " --format json \"" + sql + "\"", false);
    CHECK(json.output.substr(0, json.output.find("\"stats\"")) == "Format is json.\n" + query.output.substr(0, query.output.find("\"stats\"")));
  }
  SUBCASE("a clean script exits 0; an unfinished last statement still runs") {
    RunResult r = runShell(data, "SELECT 1 AS a;\nSELECT 5 AS b");
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "  b\n  -\n  5\n(1 row)\n"));
    CHECK(runShell(data, "").exit_code == 0);
  }
  SUBCASE("bad options") {
    CHECK(runShell("", "").exit_code == 2);
    CHECK(runShell(data + " " + server, "").exit_code == 2);
    CHECK(runShell(data + " --format xml", "").exit_code == 2);
    CHECK(runShell("--server nohost", "").exit_code == 2);
    RunResult missing = runShell("--data " + argusd.workDir() + "/nope", "");
    CHECK(missing.exit_code == 1);
    CHECK(contains(missing.output, "cannot open"));
  }
}

TEST_CASE("argus shell against an argusd that goes away: an error per statement, then it goes on") {
  testing::ArgusdProcess argusd;
  argusd.setHttp(true);
  REQUIRE(argusd.start().isOk());
  std::string dir = cli::makeTempDir("argus-shell-kill");
  const std::string out_path = dir + "/out";
  const char* bin = std::getenv("ARGUS_BIN");
  REQUIRE(bin != nullptr);
  std::string command = std::string(bin) + " shell --server 127.0.0.1:" + std::to_string(argusd.httpPort()) + " > " + out_path + " 2>&1";
  FILE* shell = ::popen(command.c_str(), "w");
  REQUIRE(shell != nullptr);
  auto output = [&] {
    std::ifstream in(out_path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::fputs("SELECT 'before' AS\n  w;\n", shell);
  std::fflush(shell);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!contains(output(), "(1 row)") && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(contains(output(), "  before\n(1 row)\n"));
  argusd.kill();
  auto start = std::chrono::steady_clock::now();
  std::fputs("SELECT 'after' AS w; SELECT 2;\n\\describe steps\n\\tables\n", shell);
  int status = ::pclose(shell);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  std::string text = output();
  INFO(text);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  size_t refused = 0;
  for (size_t at = 0; (at = text.find("127.0.0.1:" + std::to_string(argusd.httpPort()) + ": Unavailable: ", at)) != std::string::npos; ++at) ++refused;
  CHECK(refused == 3);  // two statements and \describe
  CHECK_FALSE(contains(text, "after\n"));
  CHECK(contains(text, "  steps "));  // \tables needs no server
  cli::removeTree(dir);
}
