#include "capture/stacks/native_leaf.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>

namespace argus::capture::stacks {

const char* syscallName(long nr) {
  // Numbers from <sys/syscall.h>, so they are this architecture's. Those a training thread
  // is seen blocked in: locks, sleeps, I/O waits, sockets, the GPU driver's ioctls.
  struct Entry {
    long nr;
    const char* name;
  };
  static constexpr Entry kNames[] = {
      {SYS_futex, "futex"},          {SYS_read, "read"},         {SYS_write, "write"},
      {SYS_pread64, "pread64"},      {SYS_pwrite64, "pwrite64"}, {SYS_readv, "readv"},
      {SYS_writev, "writev"},        {SYS_ioctl, "ioctl"},       {SYS_ppoll, "ppoll"},
      {SYS_pselect6, "pselect6"},    {SYS_epoll_pwait, "epoll_pwait"},
      {SYS_nanosleep, "nanosleep"},  {SYS_clock_nanosleep, "clock_nanosleep"},
      {SYS_recvfrom, "recvfrom"},    {SYS_sendto, "sendto"},     {SYS_recvmsg, "recvmsg"},
      {SYS_sendmsg, "sendmsg"},      {SYS_accept4, "accept4"},   {SYS_connect, "connect"},
      {SYS_wait4, "wait4"},          {SYS_waitid, "waitid"},     {SYS_sched_yield, "sched_yield"},
      {SYS_openat, "openat"},        {SYS_close, "close"},       {SYS_mmap, "mmap"},
      {SYS_munmap, "munmap"},        {SYS_madvise, "madvise"},   {SYS_fsync, "fsync"},
      {SYS_rt_sigtimedwait, "rt_sigtimedwait"},
#ifdef SYS_poll
      {SYS_poll, "poll"},
#endif
#ifdef SYS_select
      {SYS_select, "select"},
#endif
#ifdef SYS_epoll_wait
      {SYS_epoll_wait, "epoll_wait"},
#endif
#ifdef SYS_accept
      {SYS_accept, "accept"},
#endif
#ifdef SYS_pause
      {SYS_pause, "pause"},
#endif
#ifdef SYS_futex_waitv
      {SYS_futex_waitv, "futex_waitv"},
#endif
  };
  for (const Entry& e : kNames) {
    if (e.nr == nr) return e.name;
  }
  return nullptr;
}

NativeLeaf::NativeLeaf() = default;

NativeLeaf::~NativeLeaf() {
  for (size_t i = 0; i < slots_used_; ++i) {
    if (slots_[i].fd >= 0) ::close(slots_[i].fd);
  }
}

std::string_view NativeLeaf::parse(std::string_view content, std::string* scratch) {
  // proc(5): "running", or "-1 <sp> <pc>" (blocked, not in a system call), or
  // "<nr> <six args> <sp> <pc>".
  if (content.substr(0, 7) == "running") return "[running]";
  long nr = 0;
  auto [end, ec] = std::from_chars(content.data(), content.data() + content.size(), nr);
  if (ec != std::errc() || end == content.data()) return kUnknown;
  if (nr < 0) return "[blocked]";
  *scratch = syscallText(nr);
  return *scratch;
}

std::string NativeLeaf::syscallText(long nr) {
  const char* name = syscallName(nr);
  char text[48];
  int n = name != nullptr ? std::snprintf(text, sizeof text, "[%s]", name) : std::snprintf(text, sizeof text, "[syscall %ld]", nr);
  return std::string(text, static_cast<size_t>(n));
}

NativeLeaf::Slot* NativeLeaf::slotOf(uint32_t tid) {
  Slot* free_slot = nullptr;
  for (size_t i = 0; i < slots_used_; ++i) {
    Slot& s = slots_[i];
    if (s.tid == tid) {
      s.seen = true;
      return &s;
    }
    if (s.tid == 0 && free_slot == nullptr) free_slot = &s;
  }
  if (free_slot == nullptr && slots_used_ < kMaxThreads) free_slot = &slots_[slots_used_++];
  if (free_slot == nullptr) return nullptr;  // more threads than slots: their leaf is unknown
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%u/syscall", tid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  *free_slot = {tid, fd, true};
  return free_slot;
}

std::string_view NativeLeaf::leafOf(uint32_t tid) {
  Slot* s = tid == 0 ? nullptr : slotOf(tid);
  if (s == nullptr) {
    ++errors_;
    return kUnknown;
  }
  char buf[256];
  ssize_t n = ::pread(s->fd, buf, sizeof buf - 1, 0);
  if (n <= 0) {
    // The thread exited (ESRCH); a new thread may get its tid, so the next ask reopens.
    ++errors_;
    ::close(s->fd);
    *s = Slot{};
    return kUnknown;
  }
  std::string_view content(buf, static_cast<size_t>(n));
  long nr = 0;
  auto [end, ec] = std::from_chars(content.data(), content.data() + content.size(), nr);
  if (ec != std::errc() || nr < 0) return parse(content, &scratch_);  // running, blocked, unknown: constants
  for (const Named& x : named_) {
    if (x.nr == nr) return x.text;
  }
  Named& slot = named_[next_named_++ % kNamed];
  slot.nr = nr;
  slot.text = syscallText(nr);
  return slot.text;
}

void NativeLeaf::sweep() {
  for (size_t i = 0; i < slots_used_; ++i) {
    Slot& s = slots_[i];
    if (s.tid == 0) continue;
    if (!s.seen) {
      ::close(s.fd);
      s = Slot{};
    } else {
      s.seen = false;
    }
  }
}

}  // namespace argus::capture::stacks
