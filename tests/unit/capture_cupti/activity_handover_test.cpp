// ActivityHandover: Kineto's sequence of CUPTI calls around a torch.profiler session (register
// its callbacks, enable its kinds; at the end, disable them) pauses the owner and gives the
// API back to it afterwards; its timestamp callback changes the owner's clock. No driver
// here, so libcupti's four functions are stood in for
// by recorders of what reached them (what a real session does is checked on a GPU by
// bench/gpu/check.sh).
#include "capture/cupti/activity_handover.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace argus::capture::cupti;

namespace {

// What reached "libcupti".
std::vector<std::string> g_calls;
CUptiResult g_enable_result = CUPTI_SUCCESS;

CUpti_BuffersCallbackCompleteFunc g_registered_complete = nullptr;
CUptiResult recordRegister(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc complete) {
  g_calls.push_back("register");
  g_registered_complete = complete;
  return CUPTI_SUCCESS;
}
CUptiResult recordEnable(CUpti_ActivityKind kind) {
  g_calls.push_back("enable " + std::to_string(static_cast<int>(kind)));
  return g_enable_result;
}
CUptiResult recordDisable(CUpti_ActivityKind kind) {
  g_calls.push_back("disable " + std::to_string(static_cast<int>(kind)));
  return CUPTI_SUCCESS;
}
CUptiResult recordTimestamp(CUpti_TimestampCallbackFunc ticks) {
  g_calls.push_back(ticks != nullptr ? "timestamp callback" : "timestamp callback null");
  return CUPTI_SUCCESS;
}
const ActivityHandover::Calls kCupti{recordRegister, recordEnable, recordDisable, recordTimestamp};

void CUPTIAPI guestRequest(uint8_t**, size_t*, size_t*) {}
std::vector<uint8_t*> g_guest_got;
void CUPTIAPI guestComplete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { g_guest_got.push_back(buffer); }

// An owner using kernels and external correlation, like CuptiSource.
struct Owner : ActivityHandover::Owner {
  std::vector<std::string> calls;
  void pauseForGuest() override { calls.push_back("pause"); }
  void resumeAfterGuest() override { calls.push_back("resume"); }
  bool usesKind(CUpti_ActivityKind kind) const override {
    return kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  }
  std::vector<std::pair<uint8_t*, size_t>> observed;
  void observeGuestBuffer(uint8_t* buffer, size_t valid) override { observed.emplace_back(buffer, valid); }
  void beforeClockChange() override { calls.push_back("before clock change"); }
  CUpti_TimestampCallbackFunc clock = nullptr;
  void clockChanged(CUpti_TimestampCallbackFunc ticks) override {
    calls.push_back("clock changed");
    clock = ticks;
  }
};

uint64_t CUPTIAPI kinetoTsc() { return 42; }

std::string kindText(const char* what, CUpti_ActivityKind kind) { return std::string(what) + " " + std::to_string(static_cast<int>(kind)); }

// Kineto's enableCuptiActivities / disableCuptiActivities for kernels, memcpy, external
// correlation and the runtime API.
const CUpti_ActivityKind kKinetoKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                           CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME};

}  // namespace

TEST_CASE("a torch.profiler session pauses the owner, keeps the owner's kinds on, and resumes it when it ends") {
  ActivityHandover h;
  Owner owner;
  g_calls.clear();
  g_enable_result = CUPTI_SUCCESS;
  CHECK_FALSE(h.attach(&owner));

  CHECK(h.guestRegister(kCupti, guestRequest, guestComplete) == CUPTI_SUCCESS);
  CHECK(owner.calls == std::vector<std::string>{"pause"});  // before the guest's callbacks replace ours
  CHECK(g_calls == std::vector<std::string>{"register"});
  for (CUpti_ActivityKind k : kKinetoKinds) CHECK(h.guestEnable(kCupti, k) == CUPTI_SUCCESS);
  CHECK(h.guestTracing());

  g_calls.clear();
  for (CUpti_ActivityKind k : kKinetoKinds) CHECK(h.guestDisable(kCupti, k) == CUPTI_SUCCESS);
  // Only the kinds the owner does not use reach libcupti; the owner resumes after the last.
  CHECK(g_calls == std::vector<std::string>{kindText("disable", CUPTI_ACTIVITY_KIND_MEMCPY), kindText("disable", CUPTI_ACTIVITY_KIND_RUNTIME)});
  CHECK(owner.calls == std::vector<std::string>{"pause", "resume"});
  CHECK_FALSE(h.guestTracing());
  CHECK(h.stats().handovers == 1);
  CHECK(h.stats().resumes == 1);
  CHECK(h.stats().kept_on == 2);

  // A second session does it again.
  h.guestRegister(kCupti, guestRequest, guestComplete);
  h.guestEnable(kCupti, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  h.guestDisable(kCupti, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK(owner.calls == std::vector<std::string>{"pause", "resume", "pause", "resume"});
}

TEST_CASE("without an owner every call reaches libcupti unchanged, results included") {
  ActivityHandover h;
  g_calls.clear();
  g_enable_result = CUPTI_ERROR_UNKNOWN;  // what a driverless machine answers
  CHECK(h.guestRegister(kCupti, guestRequest, guestComplete) == CUPTI_SUCCESS);
  CHECK(h.guestEnable(kCupti, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_ERROR_UNKNOWN);
  CHECK_FALSE(h.guestTracing());  // a failed enable is not remembered
  CHECK(h.guestDisable(kCupti, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS);
  CHECK(g_calls == std::vector<std::string>{"register", kindText("enable", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                                            kindText("disable", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)});
  ActivityHandover::Calls none;
  CHECK(h.guestEnable(none, CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_ERROR_NOT_INITIALIZED);
}

TEST_CASE("an owner that starts while a guest traces starts paused; detaching leaves the guest alone") {
  ActivityHandover h;
  Owner owner;
  g_enable_result = CUPTI_SUCCESS;
  h.guestRegister(kCupti, guestRequest, guestComplete);
  h.guestEnable(kCupti, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK(h.attach(&owner));  // the owner must not register its callbacks now
  h.detach(&owner);
  g_calls.clear();
  h.guestDisable(kCupti, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK(g_calls == std::vector<std::string>{kindText("disable", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)});
  CHECK(owner.calls.empty());  // nothing is resumed once detached
}

TEST_CASE("the guest's buffers pass through the owner on their way to the guest's own callback") {
  ActivityHandover h;
  Owner owner;
  g_calls.clear();
  g_guest_got.clear();
  h.attach(&owner);
  h.guestRegister(kCupti, guestRequest, guestComplete);
  // CUPTI gets our trampoline in place of the guest's completion callback.
  CHECK((g_registered_complete == &ActivityHandover::guestCompleted));
  uint8_t buffer[64] = {};
  h.completeForGuest(nullptr, 0, buffer, sizeof buffer, 48);
  CHECK(owner.observed == std::vector<std::pair<uint8_t*, size_t>>{{buffer, 48}});
  CHECK(g_guest_got == std::vector<uint8_t*>{buffer});
  h.completeForGuest(nullptr, 0, buffer, sizeof buffer, 0);  // empty: the guest's alone
  CHECK(owner.observed.size() == 1);
  CHECK(g_guest_got.size() == 2);
  CHECK(h.stats().observed == 1);
  h.detach(&owner);
  h.completeForGuest(nullptr, 0, buffer, sizeof buffer, 48);  // detached: nobody observes
  CHECK(owner.observed.size() == 1);
  CHECK(g_guest_got.size() == 3);
}

TEST_CASE("a guest's timestamp callback: the owner's buffers come back first, then the owner takes the new clock") {
  ActivityHandover h;
  Owner owner;
  g_calls.clear();
  h.attach(&owner);
  CHECK(h.guestTimestampCallback(kCupti, kinetoTsc) == CUPTI_SUCCESS);
  CHECK(g_calls == std::vector<std::string>{"timestamp callback"});
  CHECK(owner.calls == std::vector<std::string>{"before clock change", "clock changed"});
  CHECK((owner.clock == &kinetoTsc));
  // Kineto installs the same reader at every session: passed on, no change for the owner.
  CHECK(h.guestTimestampCallback(kCupti, kinetoTsc) == CUPTI_SUCCESS);
  CHECK(g_calls.size() == 2);
  CHECK(owner.calls.size() == 2);
  CHECK(h.stats().clock_changes == 1);
  // An owner that attaches later is told the clock in use.
  h.detach(&owner);
  Owner late;
  h.attach(&late);
  CHECK(late.calls == std::vector<std::string>{"clock changed"});
  CHECK((late.clock == &kinetoTsc));
  // A null callback gives CUPTI's own clock back.
  CHECK(h.guestTimestampCallback(kCupti, nullptr) == CUPTI_SUCCESS);
  CHECK((late.clock == nullptr));
  CHECK(h.stats().clock_changes == 2);
  ActivityHandover::Calls none;
  CHECK(h.guestTimestampCallback(none, kinetoTsc) == CUPTI_ERROR_NOT_INITIALIZED);
}
