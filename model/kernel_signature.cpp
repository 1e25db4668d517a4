#include "model/kernel_signature.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

namespace argus::model {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

void putU32LE(unsigned char* p, uint32_t v) {
  p[0] = static_cast<unsigned char>(v);
  p[1] = static_cast<unsigned char>(v >> 8);
  p[2] = static_cast<unsigned char>(v >> 16);
  p[3] = static_cast<unsigned char>(v >> 24);
}

}  // namespace

std::string normalizeKernelName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool pending_space = false;
  for (char c : name) {
    if (isSpace(c)) {
      pending_space = !out.empty();  // drops leading whitespace
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;  // trailing whitespace never emitted
}

uint64_t kernelSignature(std::string_view name, const LaunchGeometry& geometry) {
  std::string normalized = normalizeKernelName(name);
  unsigned char geo[24];
  putU32LE(geo + 0, geometry.grid_x);
  putU32LE(geo + 4, geometry.grid_y);
  putU32LE(geo + 8, geometry.grid_z);
  putU32LE(geo + 12, geometry.block_x);
  putU32LE(geo + 16, geometry.block_y);
  putU32LE(geo + 20, geometry.block_z);
  // Streaming so the name and geometry hash as one message without a concatenation copy;
  // the state lives on the stack (XXH3_state_t is 64-byte aligned, ~576 bytes).
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, normalized.data(), normalized.size());
  XXH3_64bits_update(&state, geo, sizeof geo);
  return XXH3_64bits_digest(&state);
}

}  // namespace argus::model
