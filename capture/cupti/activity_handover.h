// ActivityHandover: lends the CUPTI Activity API to another client of the process (PyTorch's
// profiler, through Kineto) while it traces, and takes it back when that client is done
// (docs/capture/cupti.md, "Coexisting with torch.profiler").
//
// CUPTI keeps one pair of buffer callbacks, and one enable state per activity kind, for the
// whole process. Kineto registers its callbacks when torch.profiler starts, and disables
// the kinds it enabled when it stops; it never hands the callbacks back, and its
// `cuptiActivityDisable` would switch off kinds our source still needs. When the shim is
// preloaded (LD_PRELOAD, as `argus capture` does), its exported cuptiActivityRegisterCallbacks,
// cuptiActivityEnable and cuptiActivityDisable take those calls from every other library
// (capture/shim/cupti_interpose.cpp) and bring them here:
//   - a guest registers its callbacks: our source pauses (tagging off, a forced flush so our
//     buffers come back to us first), then the guest's callbacks are registered;
//   - a guest enables a kind: passed on, and remembered;
//   - a guest disables a kind: passed on, unless our source uses it (it then stays on). Once
//     the guest has disabled every kind it enabled, our source resumes (its callbacks
//     registered again, tagging on);
//   - a guest installs a timestamp callback (cuptiActivityRegisterTimestampCallback; Kineto
//     installs a TSC reader, for the rest of the process): our buffers come back to us
//     first, then the callback is registered, then our source maps the records stamped from
//     then on with that clock (clock_sync.h).
// With no source attached every call is passed on as it came. GPU work that runs while the
// guest traces is the guest's: our records miss it (the pause is counted and logged).
//
// Thread-safety: every method takes one mutex. The owner's pause / resume run under it,
// on the guest's thread (torch.profiler's start and stop), never on a training thread's
// hot path.
#pragma once

#include <cupti_activity.h>

#include <atomic>
#include <bitset>
#include <cstdint>
#include <mutex>

namespace argus::capture::cupti {

class ActivityHandover {
 public:
  // The CUPTI functions that do the work (libcupti's own, found past the interposers).
  struct Calls {
    CUptiResult (*registerCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
    CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
    CUptiResult (*disable)(CUpti_ActivityKind) = nullptr;
    CUptiResult (*registerTimestamp)(CUpti_TimestampCallbackFunc) = nullptr;
  };

  // The shim's source of activity records. Its methods run under the handover's lock.
  class Owner {
   public:
    virtual ~Owner() = default;
    // Stop using the API: records now go to the guest.
    virtual void pauseForGuest() = 0;
    // Take the API back: register our callbacks, tag again.
    virtual void resumeAfterGuest() = 0;
    // Whether the owner has `kind` enabled (a guest must not switch it off).
    virtual bool usesKind(CUpti_ActivityKind kind) const = 0;
    // A buffer of the guest's, completed, before the guest gets it: the owner may copy its
    // records (read only). Any thread, without the handover's lock; must not block.
    virtual void observeGuestBuffer(uint8_t* buffer, size_t valid) = 0;
    // The clock CUPTI stamps records with is about to change: hand back the buffers stamped
    // with the old one.
    virtual void beforeClockChange() = 0;
    // Records are stamped with `ticks` from now on (null: CUPTI's own clock).
    virtual void clockChanged(CUpti_TimestampCallbackFunc ticks) = 0;
  };

  // The process's one handover (CUPTI's state is per process too).
  static ActivityHandover& instance();

  // The owner starts using the API. Returns true when a guest is tracing now: the owner
  // must then start paused (not register its callbacks); resumeAfterGuest() follows. A
  // guest's timestamp callback installed before is given to the owner's clockChanged().
  bool attach(Owner* owner);
  // The owner stops using the API (a paused owner stays paused: nothing is resumed).
  void detach(Owner* owner);
  bool guestTracing() const;

  // The interposers' calls from other libraries.
  CUptiResult guestRegister(const Calls& cupti, CUpti_BuffersCallbackRequestFunc request, CUpti_BuffersCallbackCompleteFunc complete);
  CUptiResult guestEnable(const Calls& cupti, CUpti_ActivityKind kind);
  CUptiResult guestDisable(const Calls& cupti, CUpti_ActivityKind kind);
  CUptiResult guestTimestampCallback(const Calls& cupti, CUpti_TimestampCallbackFunc ticks);
  // The completion callback registered for a guest in its place: the owner observes the
  // buffer, then the guest's own callback gets it, arguments unchanged.
  static void CUPTIAPI guestCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid);
  void completeForGuest(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) const;
  // A completed buffer that is not ours, handed to the guest's completion callback (if a
  // guest ever registered one), the owner observing it first. Kineto flushes its last
  // buffers after it disabled its kinds, that is after our source resumed and our callbacks
  // replaced its own: without this they would reach only us, and torch.profiler would lose
  // the end of every session. Lock-free (the guest's callback takes its own locks; CUPTI
  // may call from any thread).
  void forwardToGuest(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) const;

  struct Stats {
    uint64_t handovers = 0;  // times a guest took the API from a running owner
    uint64_t resumes = 0;    // times the owner took it back
    uint64_t kept_on = 0;    // guest disables not passed on (the owner's kinds)
    uint64_t forwarded = 0;  // the guest's buffers handed to it by forwardToGuest
    uint64_t observed = 0;   // the guest's buffers the owner observed
    uint64_t clock_changes = 0;  // timestamp callbacks installed that changed the clock
  };
  Stats stats() const;

 private:
  static constexpr size_t kKinds = 256;  // beyond any CUpti_ActivityKind (CUDA 13: < 64)
  bool guestTracingLocked() const { return guest_registered_ && guest_kinds_.any(); }

  mutable std::mutex mu_;
  Owner* owner_ = nullptr;
  bool owner_paused_ = false;
  bool guest_registered_ = false;
  std::bitset<kKinds> guest_kinds_;  // kinds the guest enabled and has not disabled
  CUpti_TimestampCallbackFunc guest_clock_ = nullptr;  // the timestamp callback installed
  Stats stats_;
  std::atomic<CUpti_BuffersCallbackCompleteFunc> guest_complete_{nullptr};
  std::atomic<Owner*> observer_{nullptr};  // owner_, for the lock-free completion path
  mutable std::atomic<uint64_t> forwarded_{0}, observed_{0};
};

}  // namespace argus::capture::cupti
