// MemoryReader: reads this process's own memory without trusting the address, for the
// stack sampler that walks the Python interpreter's structures while other threads change
// them (docs/capture/stacks.md, "Safety").
//
// Every read goes through the kernel: process_vm_readv(2) on our own pid, or, where that
// system call is refused (a seccomp filter, an old kernel), pread(2) on /proc/self/mem. A
// bad address is an EFAULT / EIO from the kernel, returned as `false` and counted; it can
// never fault the process. The price is a system call per read (~0.3-1 µs), which is why
// callers batch reads (readMany) and cache what they decoded.
//
// Thread-safety: read() and readMany() may be called from any thread (the counters are
// relaxed atomics); the sampler uses one reader from its own thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace argus::capture::stacks {

class MemoryReader {
 public:
  enum class Method : uint8_t { kNone, kProcessVmReadv, kProcSelfMem };

  // Probes process_vm_readv on a local variable, then /proc/self/mem. usable() says
  // whether either works.
  MemoryReader();
  ~MemoryReader();
  MemoryReader(const MemoryReader&) = delete;
  MemoryReader& operator=(const MemoryReader&) = delete;

  bool usable() const { return method_ != Method::kNone; }
  Method method() const { return method_; }
  const char* methodName() const;

  // Copies `n` bytes at address `addr` into `out`. Returns false, counted in errors(), when
  // any of them is unreadable (or addr is below 4096, or addr + n wraps): `out` is then
  // unspecified.
  bool read(uint64_t addr, void* out, size_t n);
  template <typename T>
  bool readValue(uint64_t addr, T* out) {
    return read(addr, out, sizeof(T));
  }

  // One part of a batched read.
  struct Part {
    uint64_t addr;
    void* out;
    size_t n;
  };
  // Reads the parts with as few system calls as possible (one when all are readable).
  // Returns how many leading parts were read whole; a bad part ends the batch (counted once).
  // REQUIRES: count <= kMaxParts.
  static constexpr size_t kMaxParts = 256;
  size_t readMany(const Part* parts, size_t count);

  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }
  uint64_t errors() const { return errors_.load(std::memory_order_relaxed); }

 private:
  bool plausible(uint64_t addr, size_t n) const { return addr >= 4096 && addr + n >= addr; }
  bool readOnce(uint64_t addr, void* out, size_t n);

  Method method_ = Method::kNone;
  pid_t pid_ = 0;
  int mem_fd_ = -1;  // /proc/self/mem, for kProcSelfMem
  std::atomic<uint64_t> reads_{0};
  std::atomic<uint64_t> errors_{0};
};

}  // namespace argus::capture::stacks
