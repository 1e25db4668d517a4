#include <doctest/doctest.h>

#include "base/status.h"

using argus::Result;
using argus::Status;

namespace {
Status failsWhen(bool fail) {
  ARGUS_RETURN_IF_ERROR(fail ? Status::ioError("disk gone") : Status::ok());
  return Status::notFound("reached the end");
}
Result<int> half(int v) {
  if (v % 2) return Status::invalidArgument("odd");
  return v / 2;
}
}  // namespace

TEST_CASE("status carries code, message and context") {
  CHECK(Status::ok().isOk());
  CHECK(Status::ok().toString() == "OK");
  Status s = Status::corruption("bad checksum").withContext("chunk 00ff");
  CHECK(s.isCorruption());
  CHECK(s.toString() == "Corruption: chunk 00ff: bad checksum");
  CHECK(failsWhen(true).code() == Status::Code::kIoError);
  CHECK(failsWhen(false).isNotFound());
}

TEST_CASE("result holds a value or an error") {
  Result<int> ok = half(8);
  REQUIRE(ok.isOk());
  CHECK(*ok == 4);
  Result<int> bad = half(3);
  CHECK_FALSE(bad.isOk());
  CHECK(bad.status().message() == "odd");
}
