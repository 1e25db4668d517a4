// StackTable (stack ids, the described set, its bound), FrameTable's text format and
// NativeLeaf's parsing of /proc/self/task/<tid>/syscall.
#include <doctest/doctest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "capture/stacks/frame_table.h"
#include "capture/stacks/native_leaf.h"
#include "capture/stacks/stack_table.h"

using namespace argus::capture::stacks;

TEST_CASE("StackTable: ids depend on every frame and their order; each stack is new once; bounded") {
  const uint64_t a[] = {11, 22, 33};
  const uint64_t b[] = {11, 33, 22};
  const uint64_t c[] = {11, 22};
  CHECK(StackTable::fold(a, 3) == StackTable::fold(a, 3));
  CHECK(StackTable::fold(a, 3) != StackTable::fold(b, 3));
  CHECK(StackTable::fold(a, 3) != StackTable::fold(c, 2));
  CHECK(StackTable::fold(a, 0) != 0);

  StackTable t(100);
  std::set<uint64_t> ids;
  for (uint64_t i = 1; i <= 100; ++i) {
    uint64_t frames[] = {i, i * 7};
    uint64_t id = StackTable::fold(frames, 2);
    ids.insert(id);
    CHECK(t.remember(id) == StackTable::Seen::kNew);
    CHECK(t.remember(id) == StackTable::Seen::kKnown);
  }
  CHECK(ids.size() == 100);
  CHECK(t.size() == 100);
  uint64_t more[] = {1000, 1};
  CHECK(t.remember(StackTable::fold(more, 2)) == StackTable::Seen::kFull);
  // Known stacks stay known when the table is full.
  CHECK(t.remember(*ids.begin()) == StackTable::Seen::kKnown);
  CHECK(t.size() == 100);
}

TEST_CASE("FrameTable: frame text and id") {
  std::string text;
  FrameTable::formatFrame("Trainer.step", "/w/train.py", 42, &text);
  CHECK(text == "Trainer.step (/w/train.py:42)");
  std::string same;
  FrameTable::formatFrame("Trainer.step", "/w/train.py", 42, &same);
  CHECK(FrameTable::idOfText(text) == FrameTable::idOfText(same));
  FrameTable::formatFrame("Trainer.step", "/w/train.py", 43, &same);
  CHECK(FrameTable::idOfText(text) != FrameTable::idOfText(same));
}

TEST_CASE("NativeLeaf::parse: running, blocked, named and unnamed system calls, garbage") {
  std::string scratch;
  CHECK(NativeLeaf::parse("running\n", &scratch) == "[running]");
  CHECK(NativeLeaf::parse("-1 0x7ffd 0x7f12\n", &scratch) == "[blocked]");
  std::string futex = std::to_string(SYS_futex) + " 0x1 0x2 0x3 0x4 0x5 0x6 0x7ffd 0x7f12\n";
  CHECK(NativeLeaf::parse(futex, &scratch) == "[futex]");
  CHECK(NativeLeaf::parse("999 0x0 0x0 0x0 0x0 0x0 0x0 0x1 0x2\n", &scratch) == "[syscall 999]");
  CHECK(NativeLeaf::parse("", &scratch) == NativeLeaf::kUnknown);
  CHECK(NativeLeaf::parse("garbage", &scratch) == NativeLeaf::kUnknown);
  CHECK(std::string(syscallName(SYS_clock_nanosleep)) == "clock_nanosleep");
  CHECK(syscallName(-5) == nullptr);
}

TEST_CASE("NativeLeaf::leafOf reads a live thread's system call; a gone thread is unknown") {
  NativeLeaf leaf;
  // A thread sleeping in a known call: its leaf names it (given a few tries to be asleep).
  std::atomic<uint32_t> tid{0};
  std::atomic<bool> stop{false};
  std::thread sleeper([&] {
    tid = static_cast<uint32_t>(::gettid());
    while (!stop) ::usleep(20'000);
  });
  while (tid == 0) std::this_thread::yield();
  bool named = false;
  for (int i = 0; i < 50 && !named; ++i) {
    std::string_view l = leaf.leafOf(tid);
    named = l == "[clock_nanosleep]" || l == "[nanosleep]";
    leaf.sweep();
    ::usleep(2'000);
  }
  CHECK(named);
  stop = true;
  sleeper.join();
  // Its file now fails to read: unknown, counted, and the slot is freed.
  uint64_t errors = leaf.errors();
  CHECK(leaf.leafOf(tid) == NativeLeaf::kUnknown);
  CHECK(leaf.errors() == errors + 1);
  CHECK(leaf.leafOf(0) == NativeLeaf::kUnknown);
  CHECK(leaf.leafOf(0x7fffffff) == NativeLeaf::kUnknown);
}
