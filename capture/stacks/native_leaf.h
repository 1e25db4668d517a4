// NativeLeaf: what a thread is doing below Python, from /proc/self/task/<tid>/syscall
// (docs/capture/stacks.md, "Native leaf"): the system call it is blocked in ("[futex]",
// "[epoll_wait]", "[syscall 435]" for a number without a name here), "[running]" when it is
// on a CPU (in Python or native code), "[blocked]" when it sleeps outside a system call.
// The leaf is the first frame of every sampled stack, so a step's stacks tell a thread
// waiting on a lock from one computing.
//
// The files stay open (pread at offset 0 regenerates them), one per sampled thread, up to
// kMaxThreads; a thread that is gone frees its slot. Not thread-safe: the sampler's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace argus::capture::stacks {

class NativeLeaf {
 public:
  static constexpr size_t kMaxThreads = 256;
  static constexpr const char* kUnknown = "[unknown]";

  NativeLeaf();
  ~NativeLeaf();
  NativeLeaf(const NativeLeaf&) = delete;
  NativeLeaf& operator=(const NativeLeaf&) = delete;

  // The leaf text of thread `tid` now (kUnknown when its file does not read). The view is
  // valid until the next call.
  std::string_view leafOf(uint32_t tid);
  // Closes the files of threads not asked about since the previous sweep (call once per
  // sampling round, after the leafOf() calls).
  void sweep();

  // The leaf text for the content of a syscall file (exposed for tests).
  static std::string_view parse(std::string_view content, std::string* scratch);
  // The text for system call `nr` ("[futex]", "[syscall 435]").
  static std::string syscallText(long nr);

  uint64_t errors() const { return errors_; }

 private:
  struct Slot {
    uint32_t tid = 0;  // 0: free
    int fd = -1;
    bool seen = false;
  };
  Slot* slotOf(uint32_t tid);  // opens the thread's file on first use; nullptr when it cannot

  // The texts of the last system calls seen, so that steady sampling formats none.
  struct Named {
    long nr = -1;
    std::string text;
  };
  static constexpr size_t kNamed = 8;

  Slot slots_[kMaxThreads];
  size_t slots_used_ = 0;  // slots_[slots_used_, kMaxThreads) have never been used
  Named named_[kNamed];
  size_t next_named_ = 0;
  std::string scratch_;
  uint64_t errors_ = 0;
};

// The name of system call `nr` on this architecture for the common blocking ones, or nullptr.
const char* syscallName(long nr);

}  // namespace argus::capture::stacks
