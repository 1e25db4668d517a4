// MemoryReader: reads of this process's memory that cannot fault, whatever the address.
#include "capture/stacks/memory_reader.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

using argus::capture::stacks::MemoryReader;

TEST_CASE("MemoryReader reads live memory and refuses bad addresses without faulting") {
  MemoryReader r;
  REQUIRE(r.usable());
  CHECK(r.method() == MemoryReader::Method::kProcessVmReadv);  // DESIGN.md §9: works on this machine kind

  const char text[] = "argus stack sampler";
  char out[sizeof text] = {};
  REQUIRE(r.read(reinterpret_cast<uintptr_t>(text), out, sizeof text));
  CHECK(std::memcmp(out, text, sizeof text) == 0);
  uint64_t value = 0x1122334455667788ULL, got = 0;
  REQUIRE(r.readValue(reinterpret_cast<uintptr_t>(&value), &got));
  CHECK(got == value);
  CHECK(r.errors() == 0);

  // Null, the zero page, a kernel address, an address whose range wraps: errors, counted.
  uint64_t before = r.errors();
  CHECK_FALSE(r.read(0, out, 8));
  CHECK_FALSE(r.read(8, out, 8));
  CHECK_FALSE(r.read(0xffffffff81000000ULL, out, 8));
  CHECK_FALSE(r.read(UINT64_MAX - 3, out, 8));
  CHECK(r.errors() == before + 4);

  // An unmapped page (mapped, then unmapped: nobody reuses it during the test) and a page
  // with no access: EFAULT from the kernel, not SIGSEGV.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* gone = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(gone != MAP_FAILED);
  ::munmap(gone, page);
  CHECK_FALSE(r.read(reinterpret_cast<uintptr_t>(gone), out, 8));
  void* guard = ::mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(guard != MAP_FAILED);
  CHECK_FALSE(r.read(reinterpret_cast<uintptr_t>(guard), out, 8));

  // A read that starts readable and runs into the guard page fails as a whole.
  char* two = static_cast<char*>(::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(two != MAP_FAILED);
  ::mprotect(two + page, page, PROT_NONE);
  std::vector<char> big(64);
  CHECK(r.read(reinterpret_cast<uintptr_t>(two + page - 64), big.data(), 64));
  CHECK_FALSE(r.read(reinterpret_cast<uintptr_t>(two + page - 32), big.data(), 64));
  ::munmap(two, 2 * page);
  ::munmap(guard, page);
}

TEST_CASE("MemoryReader::readMany reads the good prefix of a batch in one call") {
  MemoryReader r;
  REQUIRE(r.usable());
  uint64_t a = 1, b = 2, c = 3;
  uint64_t oa = 0, ob = 0, oc = 0;
  MemoryReader::Part parts[] = {{reinterpret_cast<uintptr_t>(&a), &oa, 8}, {reinterpret_cast<uintptr_t>(&b), &ob, 8}, {reinterpret_cast<uintptr_t>(&c), &oc, 8}};
  uint64_t reads = r.reads();
  CHECK(r.readMany(parts, 3) == 3);
  CHECK(r.reads() == reads + 1);
  CHECK((oa == 1 && ob == 2 && oc == 3));

  // A bad part in the middle: the parts before it arrive, the count says where it stopped.
  oa = ob = oc = 0;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* guard = ::mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(guard != MAP_FAILED);
  MemoryReader::Part mixed[] = {{reinterpret_cast<uintptr_t>(&a), &oa, 8}, {reinterpret_cast<uintptr_t>(guard), &ob, 8}, {reinterpret_cast<uintptr_t>(&c), &oc, 8}};
  uint64_t errors = r.errors();
  CHECK(r.readMany(mixed, 3) == 1);
  CHECK(oa == 1);
  CHECK(r.errors() == errors + 1);
  // An implausible first part: nothing read.
  MemoryReader::Part null_first[] = {{0, &oa, 8}, {reinterpret_cast<uintptr_t>(&b), &ob, 8}};
  CHECK(r.readMany(null_first, 2) == 0);
  ::munmap(guard, page);
}
