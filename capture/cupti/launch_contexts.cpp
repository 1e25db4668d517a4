#include "capture/cupti/launch_contexts.h"

#include <algorithm>
#include <bit>

namespace argus::capture::cupti {

namespace {
// A power of two in [2, 2^24]: the mask indexing stays inside the ring whatever was asked.
uint32_t ringSize(uint32_t asked) { return std::bit_ceil(std::clamp<uint32_t>(asked, 2, 1u << 24)); }
}  // namespace

LaunchContexts::LaunchContexts(uint32_t capacity) : slots_(new Slot[ringSize(capacity)]), mask_(ringSize(capacity) - 1) {}

}  // namespace argus::capture::cupti
