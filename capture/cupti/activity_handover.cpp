#include "capture/cupti/activity_handover.h"

namespace argus::capture::cupti {

ActivityHandover& ActivityHandover::instance() {
  static ActivityHandover* handover = new ActivityHandover;  // leaked: interposers may run during exit
  return *handover;
}

bool ActivityHandover::attach(Owner* owner) {
  std::lock_guard<std::mutex> lock(mu_);
  owner_ = owner;
  observer_.store(owner, std::memory_order_release);
  owner_paused_ = guestTracingLocked();
  if (owner_paused_) ++stats_.handovers;
  if (guest_clock_ != nullptr) owner->clockChanged(guest_clock_);
  return owner_paused_;
}

void ActivityHandover::detach(Owner* owner) {
  std::lock_guard<std::mutex> lock(mu_);
  if (owner_ != owner) return;
  owner_ = nullptr;
  observer_.store(nullptr, std::memory_order_release);
  owner_paused_ = false;
}

bool ActivityHandover::guestTracing() const {
  std::lock_guard<std::mutex> lock(mu_);
  return guestTracingLocked();
}

CUptiResult ActivityHandover::guestRegister(const Calls& cupti, CUpti_BuffersCallbackRequestFunc request,
                                            CUpti_BuffersCallbackCompleteFunc complete) {
  if (cupti.registerCallbacks == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  std::lock_guard<std::mutex> lock(mu_);
  if (owner_ != nullptr && !owner_paused_) {
    // Before the guest's callbacks replace ours: our buffers come back to us.
    owner_->pauseForGuest();
    owner_paused_ = true;
    ++stats_.handovers;
  }
  guest_registered_ = true;
  guest_complete_.store(complete, std::memory_order_release);
  return cupti.registerCallbacks(request, complete != nullptr ? &ActivityHandover::guestCompleted : nullptr);
}

CUptiResult ActivityHandover::guestEnable(const Calls& cupti, CUpti_ActivityKind kind) {
  if (cupti.enable == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  std::lock_guard<std::mutex> lock(mu_);
  CUptiResult rc = cupti.enable(kind);
  if (rc == CUPTI_SUCCESS && static_cast<size_t>(kind) < kKinds) guest_kinds_.set(static_cast<size_t>(kind));
  return rc;
}

CUptiResult ActivityHandover::guestDisable(const Calls& cupti, CUpti_ActivityKind kind) {
  if (cupti.disable == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  std::lock_guard<std::mutex> lock(mu_);
  CUptiResult rc = CUPTI_SUCCESS;
  if (owner_ != nullptr && owner_->usesKind(kind)) {
    ++stats_.kept_on;  // the owner still needs it: the guest only stops receiving it
  } else {
    rc = cupti.disable(kind);
  }
  if (static_cast<size_t>(kind) < kKinds) guest_kinds_.reset(static_cast<size_t>(kind));
  if (owner_ != nullptr && owner_paused_ && !guest_kinds_.any()) {
    // The guest is done (it disables what it enabled when it stops): the API is ours again.
    owner_->resumeAfterGuest();
    owner_paused_ = false;
    guest_registered_ = false;
    ++stats_.resumes;
  }
  return rc;
}

CUptiResult ActivityHandover::guestTimestampCallback(const Calls& cupti, CUpti_TimestampCallbackFunc ticks) {
  if (cupti.registerTimestamp == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  std::lock_guard<std::mutex> lock(mu_);
  const bool change = ticks != guest_clock_;  // Kineto installs the same reader every session
  if (change && owner_ != nullptr) owner_->beforeClockChange();
  CUptiResult rc = cupti.registerTimestamp(ticks);
  if (rc != CUPTI_SUCCESS || !change) return rc;
  guest_clock_ = ticks;
  ++stats_.clock_changes;
  if (owner_ != nullptr) owner_->clockChanged(ticks);
  return rc;
}

void CUPTIAPI ActivityHandover::guestCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  instance().completeForGuest(context, stream, buffer, size, valid);
}

void ActivityHandover::completeForGuest(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) const {
  if (Owner* o = observer_.load(std::memory_order_acquire); o != nullptr && buffer != nullptr && valid != 0) {
    observed_.fetch_add(1, std::memory_order_relaxed);
    o->observeGuestBuffer(buffer, valid);
  }
  if (CUpti_BuffersCallbackCompleteFunc complete = guest_complete_.load(std::memory_order_acquire)) {
    complete(context, stream, buffer, size, valid);
  }
}

void ActivityHandover::forwardToGuest(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) const {
  if (guest_complete_.load(std::memory_order_acquire) == nullptr || buffer == nullptr) return;
  forwarded_.fetch_add(1, std::memory_order_relaxed);
  completeForGuest(context, stream, buffer, size, valid);
}

ActivityHandover::Stats ActivityHandover::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.forwarded = forwarded_.load(std::memory_order_relaxed);
  s.observed = observed_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace argus::capture::cupti
