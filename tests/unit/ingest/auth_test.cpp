// AuthTable: file parsing, wildcard, unknown jobs, wrong tokens.
#include <doctest/doctest.h>

#include "ingest/auth.h"

using argus::ingest::AuthTable;
using V = AuthTable::Verdict;

TEST_CASE("auth file: jobs, tokens, wildcard, comments") {
  auto t = AuthTable::parse("# comment\n\nllama-70b  tok1\nllama-70b\ttok2   # rotation\n*  shared\r\n");
  REQUIRE(t.isOk());
  CHECK(t->entries() == 3);
  CHECK(t->check("llama-70b", "tok1") == V::kAllowed);
  CHECK(t->check("llama-70b", "tok2") == V::kAllowed);
  CHECK(t->check("llama-70b", "shared") == V::kWrongToken);  // listed by name: * does not apply
  CHECK(t->check("other", "shared") == V::kAllowed);
  CHECK(t->check("other", "tok1") == V::kWrongToken);
  CHECK(t->check("llama-70b", "") == V::kWrongToken);
  CHECK(t->check("llama-70b", "tok") == V::kWrongToken);
  CHECK(t->check("llama-70b", "tok11") == V::kWrongToken);
}

TEST_CASE("auth file: no wildcard means unknown jobs") {
  auto t = AuthTable::parse("a x\n");
  REQUIRE(t.isOk());
  CHECK(t->check("a", "x") == V::kAllowed);
  CHECK(t->check("b", "x") == V::kUnknownJob);
}

TEST_CASE("auth file: malformed lines name the line") {
  auto t = AuthTable::parse("a x\nb\n", "tokens");
  REQUIRE(!t.isOk());
  CHECK(t.status().message().find("tokens:2") != std::string::npos);
  auto u = AuthTable::parse("a x y\n");
  CHECK(!u.isOk());
  auto v = AuthTable::parse("bad/job x\n");
  REQUIRE(!v.isOk());
  CHECK(v.status().message().find("invalid job id") != std::string::npos);
  CHECK(!AuthTable::load("/nonexistent/auth").isOk());
}
