// --http-tokens: the file format, and HttpRouter's 401/403 answers with tokens set.
#include <doctest/doctest.h>

#include "query/http/http_router.h"
#include "tests/unit/storage/store_test_util.h"

using namespace argus;
using query::HttpRole;
using query::HttpTokens;

TEST_CASE("HTTP tokens file: ROLE TOKEN lines, comments, refusals naming the line") {
  auto tokens = HttpTokens::parse("# argusd http tokens\nread   r-token\n\ncontrol c-token  # the on-call\r\nread r2\n");
  REQUIRE(tokens.isOk());
  CHECK(tokens->entries() == 3);
  CHECK(tokens->roleOf("Bearer r-token") == HttpRole::kRead);
  CHECK(tokens->roleOf("Bearer r2") == HttpRole::kRead);
  CHECK(tokens->roleOf("Bearer c-token") == HttpRole::kControl);
  CHECK(tokens->roleOf("Bearer  c-token ") == HttpRole::kControl);
  CHECK_FALSE(tokens->roleOf("Bearer c-toke"));
  CHECK_FALSE(tokens->roleOf("Bearer c-tokenx"));
  CHECK_FALSE(tokens->roleOf("Bearer "));
  CHECK_FALSE(tokens->roleOf("Basic r-token"));
  CHECK_FALSE(tokens->roleOf("r-token"));
  CHECK_FALSE(tokens->roleOf(""));

  auto bad_role = HttpTokens::parse("read a\nadmin b\n", "tokens.txt");
  REQUIRE_FALSE(bad_role.isOk());
  CHECK(bad_role.status().message().find("tokens.txt:2") != std::string::npos);
  CHECK(bad_role.status().message().find("admin") != std::string::npos);
  CHECK_FALSE(HttpTokens::parse("read\n").isOk());
  CHECK_FALSE(HttpTokens::parse("read a b\n").isOk());
  CHECK_FALSE(HttpTokens::parse("# nothing\n\n").isOk());
  CHECK_FALSE(HttpTokens::load("/nonexistent/tokens").isOk());
}

TEST_CASE("with tokens, /api/ needs a bearer token and control endpoints a control token") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path());
  query::HttpRouter router(*store, nullptr);
  auto tokens = HttpTokens::parse("read r-token\ncontrol c-token\n");
  REQUIRE(tokens.isOk());
  router.setTokens(std::move(*tokens));

  auto status = [&](const char* method, const char* target, const char* authorization, const char* body = "") {
    return router.handle({method, target, body, authorization}).status;
  };
  query::HttpResponse missing = router.handle({"GET", "/api/v1/jobs", "", ""});
  CHECK(missing.status == 401);
  REQUIRE(missing.headers.size() == 1);
  CHECK(missing.headers[0].first == "WWW-Authenticate");
  CHECK(status("GET", "/api/v1/jobs", "Bearer wrong") == 401);
  CHECK(status("POST", "/api/v1/grafana/tag-keys", "Bearer wrong", "{}") == 401);
  CHECK(status("GET", "/healthz", "") == 200);
  CHECK(status("GET", "/metrics", "") == 200);

  CHECK(status("GET", "/api/v1/jobs", "Bearer r-token") == 200);
  CHECK(status("POST", "/api/v1/query", "Bearer r-token", "SELECT 1") == 200);
  CHECK(status("GET", "/api/v1/grafana", "Bearer r-token") == 200);
  CHECK(status("POST", "/api/v1/grafana/tag-keys", "Bearer r-token", "{}") == 200);
  CHECK(status("POST", "/api/v1/jobs/demo/flight-recorder?from_step=1&to_step=2", "Bearer r-token") == 403);
  // A control token gets through to the endpoint (no ingest here: 503).
  CHECK(status("POST", "/api/v1/jobs/demo/flight-recorder?from_step=1&to_step=2", "Bearer c-token") == 503);
  CHECK(status("GET", "/api/v1/jobs", "Bearer c-token") == 200);
}
