// The injection handlers called directly, as NVTX calls them, and what the Drain makes of
// each call: event types, names (domains, registered and wide strings), payloads, threads.
#include <doctest/doctest.h>

#include <string>
#include <thread>

#include "capture/nvtx/nvtx_injection.h"
#include "nvtx_test_util.h"

using namespace argus::capture;
using namespace argus::capture::nvtx;
using namespace argus::capture::nvtx::handlers;
using argus::capture::nvtx::testing::Collected;
using argus::capture::nvtx::testing::currentTid;

namespace {

nvtxEventAttributes_t ascii(const char* text) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = text;
  return a;
}

nvtxEventAttributes_t withU64(const char* text, uint64_t v) {
  nvtxEventAttributes_t a = ascii(text);
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = v;
  return a;
}

}  // namespace

TEST_CASE("default-domain push/pop: begin/end pairs on the calling thread, NVTX levels returned") {
  Collected c;
  CHECK(rangePushA("outer") == 0);
  CHECK(rangePushA("inner") == 1);
  CHECK(rangePop() == 1);
  CHECK(rangePop() == 0);
  auto ev = c.pull();
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].type == EventType::kRangeBegin);
  CHECK(c.name(ev[0]) == "outer");
  CHECK(ev[1].type == EventType::kRangeBegin);
  CHECK(c.name(ev[1]) == "inner");
  CHECK(ev[2].type == EventType::kRangeEnd);
  CHECK(ev[3].type == EventType::kRangeEnd);
  for (size_t i = 0; i < ev.size(); ++i) {
    CHECK(ev[i].thread == currentTid());
    CHECK(ev[i].end_ns == ev[i].start_ns);
    if (i > 0) CHECK(ev[i].start_ns >= ev[i - 1].start_ns);
  }
  // Unix-epoch ns: after 2020-01-01 and before 2100.
  CHECK(ev[0].start_ns > 1'577'836'800'000'000'000);
  CHECK(ev[0].start_ns < 4'102'444'800'000'000'000);
}

TEST_CASE("a pop with nothing open returns -1, makes no event and is counted") {
  Collected c;
  uint64_t before = c.drain.stats().unmatched_pops;
  CHECK(rangePop() == -1);
  CHECK(domainRangePop(nullptr) == -1);
  CHECK(c.pull().empty());
  CHECK(c.drain.stats().unmatched_pops == before + 2);
}

TEST_CASE("marks: ASCII, wide, and each Ex message type") {
  Collected c;
  nvtxStringHandle_t reg = domainRegisterStringA(nullptr, "registered-in-default");
  markA("tick");
  markW(L"h\u00e9llo \u4e2d");
  nvtxEventAttributes_t a = ascii("ex-ascii");
  markEx(&a);
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = L"ex-\u00fcnicode";
  markEx(&a);
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = reg;
  markEx(&a);
  markEx(nullptr);  // no attributes: an unnamed mark
  a.messageType = NVTX_MESSAGE_UNKNOWN;
  markEx(&a);
  auto ev = c.pull();
  REQUIRE(ev.size() == 7);
  const char* want[] = {"tick", "h\xC3\xA9llo \xE4\xB8\xAD", "ex-ascii", "ex-\xC3\xBCnicode", "registered-in-default", "", ""};
  for (size_t i = 0; i < 7; ++i) {
    CAPTURE(i);
    CHECK(ev[i].type == EventType::kMark);
    CHECK(c.name(ev[i]) == want[i]);
  }
  CHECK(ev[5].name == 0);
  CHECK(c.drain.stats().unknown_names == 0);
}

TEST_CASE("an attributes struct smaller than the message field names nothing") {
  Collected c;
  nvtxEventAttributes_t a = withU64("cut-off", 5);
  a.size = static_cast<uint16_t>(offsetof(nvtxEventAttributes_t, messageType));
  markEx(&a);
  auto ev = c.pull();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].name == 0);
  CHECK(ev[0].id == 5);  // the payload lies within the size
}

TEST_CASE("domains: '<domain>:' names, one handle per name, own nesting, complete ranges at the pop") {
  Collected c;
  nvtxDomainHandle_t nccl = domainCreateA("NCCL");
  CHECK(nccl != nullptr);
  CHECK(domainCreateA("NCCL") == nccl);
  CHECK(domainCreateW(L"NCCL") == nccl);
  nvtxDomainHandle_t argus = domainCreateA("argus");
  CHECK(argus != nccl);

  nvtxEventAttributes_t all_reduce = ascii("AllReduce");
  CHECK(domainRangePushEx(nccl, &all_reduce) == 0);
  CHECK(domainRangePop(nccl) == 0);
  nvtxEventAttributes_t fwd = ascii("forward");
  domainMarkEx(argus, &fwd);
  nvtxEventAttributes_t prefixed = ascii("argus:backward");  // already carries its domain
  domainMarkEx(argus, &prefixed);
  domainMarkEx(nullptr, &fwd);  // the default domain: no prefix
  domainMarkEx(nccl, &fwd);     // same text, another domain: another name
  auto ev = c.pull();
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].type == EventType::kRange);
  CHECK(c.name(ev[0]) == "NCCL:AllReduce");
  CHECK(ev[0].thread == currentTid());
  CHECK(ev[0].end_ns >= ev[0].start_ns);
  CHECK(c.name(ev[1]) == "argus:forward");
  CHECK(c.name(ev[2]) == "argus:backward");
  CHECK(c.name(ev[3]) == "forward");
  CHECK(c.name(ev[4]) == "NCCL:forward");
}

TEST_CASE("pops follow NVTX's per-domain nesting when domains cross") {
  Collected c;
  nvtxDomainHandle_t nccl = domainCreateA("NCCL");
  nvtxEventAttributes_t inner = ascii("inner");
  CHECK(rangePushA("outer") == 0);
  CHECK(domainRangePushEx(nccl, &inner) == 0);  // levels count per domain
  CHECK(rangePushA("outer2") == 1);
  CHECK(rangePop() == 1);
  CHECK(rangePop() == 0);            // ends "outer", although the NCCL range opened later
  CHECK(domainRangePop(nccl) == 0);  // ends "inner"
  auto ev = c.pull();
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].type == EventType::kRangeBegin);
  CHECK(c.name(ev[0]) == "outer");
  CHECK(ev[1].type == EventType::kRangeBegin);
  CHECK(c.name(ev[1]) == "outer2");
  CHECK(ev[2].type == EventType::kRangeEnd);
  CHECK(ev[3].type == EventType::kRangeEnd);
  CHECK(ev[4].type == EventType::kRange);
  CHECK(c.name(ev[4]) == "NCCL:inner");
  CHECK(ev[4].start_ns >= ev[0].start_ns);
  CHECK(ev[4].start_ns <= ev[1].start_ns);
  CHECK(ev[4].end_ns >= ev[3].start_ns);
}

TEST_CASE("registered strings: one handle per (domain, text), named in their domain") {
  Collected c;
  nvtxDomainHandle_t nccl = domainCreateA("NCCL");
  nvtxStringHandle_t a = domainRegisterStringA(nccl, "Broadcast");
  CHECK(a != nullptr);
  CHECK(domainRegisterStringA(nccl, "Broadcast") == a);
  CHECK(domainRegisterStringW(nccl, L"Broadcast") == a);
  nvtxStringHandle_t b = domainRegisterStringA(nullptr, "Broadcast");
  CHECK(b != a);
  nvtxEventAttributes_t attr = ascii("");
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = a;
  domainRangePushEx(nccl, &attr);
  domainRangePop(nccl);
  attr.message.registered = b;
  rangePushEx(&attr);
  rangePop();
  attr.message.registered = reinterpret_cast<nvtxStringHandle_t>(uintptr_t{999999});  // never issued
  markEx(&attr);
  auto ev = c.pull();
  REQUIRE(ev.size() == 4);
  CHECK(c.name(ev[0]) == "NCCL:Broadcast");
  CHECK(ev[1].type == EventType::kRangeBegin);
  CHECK(c.name(ev[1]) == "Broadcast");
  CHECK(ev[3].type == EventType::kMark);
  CHECK(ev[3].name == 0);
}

TEST_CASE("payloads: integers in TraceEvent::id, bare step markers numbered by them") {
  Collected c;
  nvtxEventAttributes_t a = withU64("argus:step", 7);
  rangePushEx(&a);
  rangePop();
  a = ascii("ProfilerStep#");
  a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
  a.payload.iValue = 3;
  markEx(&a);
  a = ascii("argus:step");
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = -5;  // not a step number
  markEx(&a);
  a = ascii("argus:step#4");  // already numbered: kept
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
  a.payload.ullValue = ~uint64_t{0};  // the upper half of the union is garbage for 32-bit types
  a.payload.uiValue = 9;
  markEx(&a);
  a = ascii("forward");
  a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
  a.payload.dValue = 2.5;  // floating payloads are not kept
  markEx(&a);
  nvtxDomainHandle_t argus = domainCreateA("argus");
  a = withU64("step", 12);  // domain "argus" + "step" = "argus:step"
  nvtxRangeId_t id = domainRangeStartEx(argus, &a);
  domainRangeEnd(argus, id);
  auto ev = c.pull();
  REQUIRE(ev.size() == 7);
  CHECK(c.name(ev[0]) == "argus:step#7");
  CHECK(ev[0].id == 7);
  CHECK(c.name(ev[2]) == "ProfilerStep#3");
  CHECK(ev[2].id == 3);
  CHECK(c.name(ev[3]) == "argus:step");
  CHECK(ev[3].id == static_cast<uint64_t>(int64_t{-5}));
  CHECK(c.name(ev[4]) == "argus:step#4");
  CHECK(ev[4].id == 9);
  CHECK(c.name(ev[5]) == "forward");
  CHECK(ev[5].id == 0);
  CHECK(ev[6].type == EventType::kRange);
  CHECK(c.name(ev[6]) == "argus:step#12");
  // What the assembler's rules read from them.
  NameRules rules = NameRules::defaults();
  CHECK(rules.stepMarker(c.name(ev[0])) == 7);
  CHECK(rules.stepMarker(c.name(ev[2])) == 3);
  CHECK(rules.stepMarker(c.name(ev[6])) == 12);

  DrainOptions off;
  off.step_from_payload = false;
  Collected plain(off);
  a = withU64("argus:step", 8);
  markEx(&a);
  auto ev2 = plain.pull();
  REQUIRE(ev2.size() == 1);
  CHECK(plain.name(ev2[0]) == "argus:step");
  CHECK(ev2[0].id == 8);
}

TEST_CASE("start/end: a complete range on the starting thread, ended anywhere, across drains") {
  Collected c;
  nvtxRangeId_t id = rangeStartA("data_load");
  CHECK(id != 0);
  uint32_t ender = 0;
  std::thread t([&] {
    ender = currentTid();
    rangeEnd(id);
  });
  t.join();
  auto ev = c.pull();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].type == EventType::kRange);
  CHECK(c.name(ev[0]) == "data_load");
  CHECK(ev[0].thread == currentTid());
  CHECK(ev[0].thread != ender);
  CHECK(ev[0].end_ns >= ev[0].start_ns);

  nvtxRangeId_t w = rangeStartW(L"w\u00e9");
  CHECK(w != id);
  CHECK(c.pull().empty());  // not ended yet: nothing to show
  rangeEnd(w);
  ev = c.pull();
  REQUIRE(ev.size() == 1);
  CHECK(c.name(ev[0]) == "w\xC3\xA9");

  rangeEnd(0);  // never issued: ignored
  CHECK(c.pull().empty());
}

TEST_CASE("ranges that never end are forgotten at the pending bound, and counted") {
  DrainOptions o;
  o.max_pending_ranges = 8;
  Collected c(o);
  for (int i = 0; i < 20; ++i) rangeStartA("leak");
  c.pull();
  CHECK(c.drain.stats().unended_ranges >= 8);
  nvtxRangeId_t kept = rangeStartA("kept");
  c.pull();
  rangeEnd(kept);
  auto ev = c.pull();
  REQUIRE(ev.size() == 1);
  CHECK(c.name(ev[0]) == "kept");
}

TEST_CASE("long names are cut to 1,024 bytes at a character boundary") {
  Collected c;
  std::string e_acute;
  for (int i = 0; i < 1000; ++i) e_acute += "\xC3\xA9";  // 2,000 bytes
  std::string odd = "x" + e_acute;                       // a cut at 1,024 would split a character
  std::wstring han(700, L'\u4e2d');                      // 2,100 bytes in UTF-8
  uint64_t before = c.drain.stats().truncated_names;
  markA(e_acute.c_str());
  markA(odd.c_str());
  markW(han.c_str());
  auto ev = c.pull();
  REQUIRE(ev.size() == 3);
  CHECK(c.name(ev[0]) == e_acute.substr(0, 1024));
  CHECK(c.name(ev[1]) == odd.substr(0, 1023));
  CHECK(c.name(ev[2]).size() == 1023);  // 341 characters of 3 bytes
  CHECK(c.drain.stats().truncated_names == before + 3);
}

TEST_CASE("domain handles Argus never issued: the event is dropped and counted") {
  Collected c;
  uint64_t before = c.drain.stats().bad_handles;
  nvtxEventAttributes_t a = ascii("x");
  auto bogus = reinterpret_cast<nvtxDomainHandle_t>(uintptr_t{0x12345678});
  CHECK(domainRangePushEx(bogus, &a) == -1);
  CHECK(domainRangePop(bogus) == -1);
  domainMarkEx(bogus, &a);
  CHECK(c.pull().empty());
  CHECK(c.drain.stats().bad_handles == before + 3);
}

TEST_CASE("the name cache: many distinct names, slot reuse and arena resets keep every name right") {
  Collected c;
  std::vector<std::string> names;
  for (int i = 0; i < 1500; ++i) names.push_back("op_" + std::to_string(i) + std::string(static_cast<size_t>(i % 40), 'x'));
  for (int round = 0; round < 3; ++round) {
    for (const std::string& n : names) markA(n.c_str());
    auto ev = c.pull();
    REQUIRE(ev.size() == names.size());
    for (size_t i = 0; i < names.size(); ++i) CHECK(c.name(ev[i]) == names[i]);
  }
  // The same buffer rewritten in place between calls: content decides, not the pointer.
  char buf[16] = "forward";
  markA(buf);
  std::snprintf(buf, sizeof(buf), "backward");
  markA(buf);
  auto ev = c.pull();
  REQUIRE(ev.size() == 2);
  CHECK(c.name(ev[0]) == "forward");
  CHECK(c.name(ev[1]) == "backward");
  CHECK(c.drain.stats().unknown_names == 0);
}

TEST_CASE("capture off: nothing is recorded, but pops of pushes recorded before still close them") {
  Collected c;
  rangePushA("before-off");
  Recorder::instance().setEnabled(false);
  markA("while-off");
  CHECK(rangePushA("pushed-while-off") == 1);
  CHECK(rangePop() == 1);
  CHECK(rangePop() == 0);
  Recorder::instance().setEnabled(true);
  markA("after");
  auto ev = c.pull();
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].type == EventType::kRangeBegin);
  CHECK(ev[1].type == EventType::kRangeEnd);
  CHECK(c.name(ev[2]) == "after");
}

TEST_CASE("thread names from nvtxNameOsThread") {
  Collected c;
  nameOsThreadA(4242, "loader");
  nameOsThreadW(4343, L"tr\u00e4iner");
  nameOsThreadA(4444, nullptr);  // ignored
  CHECK(c.pull().empty());
  CHECK(c.drain.threadNames().at(4242) == "loader");
  CHECK(c.drain.threadNames().at(4343) == "tr\xC3\xA4iner");
  CHECK(c.drain.threadNames().count(4444) == 0);
}

TEST_CASE("a new Drain discards what is buffered and its threads re-announce their names") {
  markA("cached-by-the-old-drain");
  {
    Collected first;
    markA("cached-by-the-old-drain");
    CHECK(first.pull().size() == 1);
  }
  markA("buffered-before-the-new-drain");
  Collected second;
  markA("cached-by-the-old-drain");
  auto ev = second.pull();
  REQUIRE(ev.size() == 1);
  CHECK(second.name(ev[0]) == "cached-by-the-old-drain");
  CHECK(second.drain.stats().unknown_names == 0);
}

namespace {
struct Change {
  uint32_t thread;
  int64_t ts_ns;
};
std::vector<Change> g_changes;
void onChange(void*, uint32_t thread, int64_t ts_ns) {
  g_changes.push_back({thread, ts_ns});
}
const RangeListener kListener{onChange, nullptr};
}  // namespace

TEST_CASE("the range listener hears every push, pop, start, end and mark, at the event's time") {
  Collected c;
  g_changes.clear();
  Recorder::instance().setRangeListener(&kListener);
  rangePushA("forward");
  markA("tick");
  rangeEnd(rangeStartA("data_load"));
  rangePop();
  Recorder::instance().setRangeListener(nullptr);
  rangePushA("unheard");
  rangePop();
  auto ev = c.pull();
  REQUIRE(g_changes.size() == 5);
  REQUIRE(ev.size() == 6);
  for (const Change& ch : g_changes) CHECK(ch.thread == currentTid());
  CHECK(g_changes[0].ts_ns == ev[0].start_ns);  // push
  CHECK(g_changes[1].ts_ns == ev[1].start_ns);  // mark
  CHECK(g_changes[2].ts_ns == ev[2].start_ns);  // start (the range comes out at its end)
  CHECK(g_changes[3].ts_ns == ev[2].end_ns);    // end
  CHECK(g_changes[4].ts_ns == ev[3].start_ns);  // pop
}

TEST_CASE("pops of pushes a new Drain discarded make no event (the assembler would pop the wrong range)") {
  rangePushA("before-the-drain");
  nvtxDomainHandle_t d = domainCreateA("NCCL");
  nvtxEventAttributes_t a = ascii("before-the-drain");
  domainRangePushEx(d, &a);
  Collected c;
  rangePushA("inside");
  rangePop();
  domainRangePop(d);
  rangePop();
  auto ev = c.pull();
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].type == EventType::kRangeBegin);
  CHECK(ev[1].type == EventType::kRangeEnd);
  CHECK(c.drain.stats().pops_before_drain == 2);
}
