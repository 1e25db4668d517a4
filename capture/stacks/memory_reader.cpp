#include "capture/stacks/memory_reader.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace argus::capture::stacks {

MemoryReader::MemoryReader() : pid_(::getpid()) {
  // Probe on a value we know, so that a refused system call (EPERM, ENOSYS) is told apart
  // from a bad address later.
  const uint64_t probe = 0x5eed5eed5eed5eedULL;
  uint64_t got = 0;
  method_ = Method::kProcessVmReadv;
  if (readOnce(reinterpret_cast<uintptr_t>(&probe), &got, sizeof got) && got == probe) return;
  mem_fd_ = ::open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
  method_ = Method::kProcSelfMem;
  got = 0;
  if (mem_fd_ >= 0 && readOnce(reinterpret_cast<uintptr_t>(&probe), &got, sizeof got) && got == probe) return;
  method_ = Method::kNone;
}

MemoryReader::~MemoryReader() {
  if (mem_fd_ >= 0) ::close(mem_fd_);
}

const char* MemoryReader::methodName() const {
  switch (method_) {
    case Method::kProcessVmReadv: return "process_vm_readv";
    case Method::kProcSelfMem: return "/proc/self/mem";
    case Method::kNone: break;
  }
  return "none";
}

bool MemoryReader::readOnce(uint64_t addr, void* out, size_t n) {
  if (method_ == Method::kProcessVmReadv) {
    iovec local{out, n};
    iovec remote{reinterpret_cast<void*>(addr), n};
    return ::process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
  }
  if (method_ == Method::kProcSelfMem) {
    // pread's offset is an off_t: addresses above 2^63 do not exist in user space anyway.
    if (addr > static_cast<uint64_t>(INT64_MAX)) return false;
    return ::pread(mem_fd_, out, n, static_cast<off_t>(addr)) == static_cast<ssize_t>(n);
  }
  return false;
}

bool MemoryReader::read(uint64_t addr, void* out, size_t n) {
  reads_.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) return true;
  if (!plausible(addr, n) || !readOnce(addr, out, n)) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

size_t MemoryReader::readMany(const Part* parts, size_t count) {
  if (count > kMaxParts) count = kMaxParts;
  size_t good = 0;
  while (good < count && plausible(parts[good].addr, parts[good].n)) ++good;
  size_t done = 0;
  if (method_ == Method::kProcessVmReadv && good > 0) {
    // One call for the plausible prefix. A fault ends the transfer at an iovec boundary
    // (process_vm_readv(2)), so the byte count says how many parts arrived whole.
    iovec local[kMaxParts], remote[kMaxParts];
    for (size_t i = 0; i < good; ++i) {
      local[i] = {parts[i].out, parts[i].n};
      remote[i] = {reinterpret_cast<void*>(parts[i].addr), parts[i].n};
    }
    reads_.fetch_add(1, std::memory_order_relaxed);
    ssize_t got = ::process_vm_readv(pid_, local, good, remote, good, 0);
    size_t bytes = got > 0 ? static_cast<size_t>(got) : 0;
    while (done < good && bytes >= parts[done].n) bytes -= parts[done++].n;
  } else {
    while (done < good && read(parts[done].addr, parts[done].out, parts[done].n)) ++done;
    if (done < good) return done;  // read() counted the error
  }
  if (done < count) errors_.fetch_add(1, std::memory_order_relaxed);
  return done;
}

}  // namespace argus::capture::stacks
