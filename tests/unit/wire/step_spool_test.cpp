// StepSpool: the spool file on its own (docs/wire/spool.md): round trip, in-order replay
// and release by acks, rewinds, a torn tail, a corrupt record, hostile lengths, the bound,
// a write failure, and taking over a file of an earlier process.
#include <dirent.h>
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "simulate/synthetic_steps.h"
#include "wire/step_spool.h"
#include "temp_dir.h"

using namespace argus;
using namespace argus::wire;

namespace {

// Each test's own directory, named for this file.
struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("argus-spool-test") {}
};

struct Log {
  std::vector<std::string> lines;
  std::function<void(std::string_view)> fn() {
    return [this](std::string_view l) { lines.emplace_back(l); };
  }
  bool has(std::string_view what) const {
    for (const auto& l : lines)
      if (l.find(what) != std::string::npos) return true;
    return false;
  }
};

StepSpoolOptions optionsFor(const TempDir& dir, Log* log, uint32_t rank = 2, std::string job = "unit-job") {
  return StepSpoolOptions{.dir = dir.path, .job = std::move(job), .rank = rank, .max_bytes = uint64_t{1} << 30, .log = log->fn()};
}

Dictionary dictionaryOf(const simulate::SyntheticSteps& gen) {
  Dictionary d;
  d.kernels = gen.dictionary().kernels;
  d.stacks = gen.dictionary().stacks;
  d.strings = gen.dictionary().strings;
  return d;
}

// Writes `n` records of rank 2 (the dictionary before the first) and leaves the file as a
// dead process would: closed with its records unacknowledged. Returns its path.
std::string leaveSpool(const TempDir& dir, int n, std::vector<model::StepRecord>* written) {
  Log log;
  simulate::SyntheticSteps gen(2, 6);
  StepSpool spool(optionsFor(dir, &log));
  for (int i = 0; i < n; ++i) {
    written->push_back(gen.next());
    REQUIRE(spool.append(i == 0 ? dictionaryOf(gen) : Dictionary{}, written->back()).isOk());
  }
  return spool.path();
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void writeFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Offsets of every entry in a spool file's bytes (after the magic).
std::vector<size_t> entryOffsets(const std::string& bytes) {
  std::vector<size_t> out;
  size_t off = kSpoolMagic.size();
  while (off + kSpoolEntryOverheadBytes <= bytes.size()) {
    out.push_back(off);
    uint32_t len = static_cast<uint8_t>(bytes[off]) | static_cast<uint8_t>(bytes[off + 1]) << 8 |
                   static_cast<uint8_t>(bytes[off + 2]) << 16 | static_cast<uint32_t>(static_cast<uint8_t>(bytes[off + 3])) << 24;
    off += kSpoolEntryOverheadBytes + len;
  }
  return out;
}

// Takes n records from the spool, checking them against written[0, n).
void takeAndCheck(StepSpool& spool, const std::vector<model::StepRecord>& written, int n) {
  model::StepRecord rec;
  for (int i = 0; i < n; ++i) {
    REQUIRE(spool.peek(&rec));
    CHECK(rec == written[i]);
    spool.take();
  }
}

}  // namespace

TEST_CASE("round trip: records come back in order, leave only when acknowledged, and the empty file goes") {
  TempDir dir;
  Log log;
  simulate::SyntheticSteps gen(2, 6);
  std::vector<model::StepRecord> written;
  StepSpool spool(optionsFor(dir, &log));
  model::StepRecord rec;
  CHECK_FALSE(spool.peek(&rec));
  CHECK(dir.files().empty());  // no file before the first append
  for (int i = 0; i < 20; ++i) {
    written.push_back(gen.next());
    REQUIRE(spool.append(i == 0 ? dictionaryOf(gen) : Dictionary{}, written.back()).isOk());
  }
  REQUIRE(dir.files().size() == 1);
  CHECK(dir.files()[0].starts_with("argus-spool-unit-job-rank2-pid" + std::to_string(::getpid()) + "-"));
  CHECK(spool.records() == 20);
  for (int i = 0; i < 12; ++i) {
    REQUIRE(spool.peek(&rec));
    CHECK(rec == written[i]);
    REQUIRE(spool.peek(&rec));  // again without take(): the same record
    CHECK(rec == written[i]);
    spool.take();
  }
  CHECK(spool.inFlight() == 12);
  CHECK_FALSE(spool.acknowledge(13));  // more than in flight: refused, nothing changes
  REQUIRE(spool.acknowledge(5));
  CHECK(spool.records() == 15);
  CHECK_FALSE(spool.removeIfDrained());

  // A new session: the 7 taken but unacknowledged records come again, first.
  spool.rewind();
  for (int i = 5; i < 20; ++i) {
    REQUIRE(spool.peek(&rec));
    CHECK(rec.step == written[i].step);
    spool.take();
  }
  CHECK_FALSE(spool.peek(&rec));
  // Appends while replaying go behind.
  written.push_back(gen.next());
  REQUIRE(spool.append({}, written.back()).isOk());
  REQUIRE(spool.peek(&rec));
  CHECK(rec == written.back());
  spool.take();
  REQUIRE(spool.acknowledge(16));
  auto st = spool.stats();
  CHECK(st.records == 0);
  CHECK(st.records_written == 21);
  CHECK(st.records_acked == 21);
  CHECK(st.records_resent == 7);
  CHECK(st.bytes > 0);
  CHECK(spool.removeIfDrained());
  CHECK(dir.files().empty());
  CHECK(spool.stats().bytes == 0);
  // The next append starts a new file.
  REQUIRE(spool.append(dictionaryOf(gen), gen.next()).isOk());
  CHECK(dir.files().size() == 1);
  CHECK(log.lines.empty());
}

TEST_CASE("the worked example of docs/wire/spool.md: magic and header entry of job j, rank 0") {
  TempDir dir;
  Log log;
  StepSpool spool(StepSpoolOptions{.dir = dir.path, .job = "j", .rank = 0, .max_bytes = uint64_t{1} << 20, .log = log.fn()});
  simulate::SyntheticSteps gen(0, 4);
  REQUIRE(spool.append({}, gen.next()).isOk());
  std::string bytes = readFile(spool.path());
  const unsigned char want[] = {0x41, 0x52, 0x47, 0x53, 0x50, 0x4f, 0x4f, 0x4c, 0x04, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00,
                                0x01, 0x6a, 0x9e, 0xda, 0xc9, 0x10, 0xa4, 0x53, 0x59, 0x1a};
  REQUIRE(bytes.size() > sizeof want);
  CHECK(bytes.substr(0, sizeof want) == std::string(reinterpret_cast<const char*>(want), sizeof want));
  CHECK(bytes[sizeof want + 4] == static_cast<char>(SpoolEntryType::kRecord));  // no dictionary given: the record next
  REQUIRE(spool.acknowledge(0));
}

TEST_CASE("an earlier process's file is taken over whole: dictionary, records in order; a live one is not") {
  TempDir dir;
  std::vector<model::StepRecord> written;
  std::string path = leaveSpool(dir, 10, &written);
  REQUIRE(dir.files().size() == 1);

  Log log;
  StepSpool other_rank(optionsFor(dir, &log, 3));
  Dictionary none;
  CHECK(other_rank.adoptOrphan(&none) == 0);  // another rank's file is not ours
  StepSpool other_job(optionsFor(dir, &log, 2, "unit"));
  CHECK(other_job.adoptOrphan(&none) == 0);  // nor another job's whose name starts alike

  StepSpool spool(optionsFor(dir, &log));
  Dictionary dict;
  REQUIRE(spool.adoptOrphan(&dict) == 10);
  simulate::SyntheticSteps gen(2, 6);
  CHECK(dict.kernels == gen.dictionary().kernels);
  CHECK(dict.stacks == gen.dictionary().stacks);
  CHECK(spool.path() == path);
  CHECK(log.has("of an earlier run: 10 steps"));
  // While this one holds it, nobody else takes it.
  StepSpool third(optionsFor(dir, &log));
  CHECK(third.adoptOrphan(&none) == 0);

  takeAndCheck(spool, written, 10);
  CHECK(spool.stats().records_adopted == 10);
  REQUIRE(spool.acknowledge(10));
  CHECK(spool.removeIfDrained());
  CHECK(dir.files().empty());
}

TEST_CASE("a torn tail is truncated with one log line; the whole records before it replay") {
  TempDir dir;
  std::vector<model::StepRecord> written;
  std::string path = leaveSpool(dir, 8, &written);
  std::string bytes = readFile(path);
  auto offsets = entryOffsets(bytes);
  REQUIRE(offsets.size() == 1 + 1 + 8);  // header, dictionary, records
  // A crash in the middle of writing the last record.
  size_t cut = offsets.back() + 7;
  writeFile(path, bytes.substr(0, cut));

  Log log;
  StepSpool spool(optionsFor(dir, &log));
  Dictionary dict;
  REQUIRE(spool.adoptOrphan(&dict) == 7);
  CHECK(log.lines.size() == 2);  // the truncation, the adoption
  CHECK(log.has("torn or corrupt entry at byte " + std::to_string(offsets.back())));
  struct stat st{};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(static_cast<size_t>(st.st_size) == offsets.back());
  takeAndCheck(spool, written, 7);
  model::StepRecord rec;
  CHECK_FALSE(spool.peek(&rec));
}

TEST_CASE("a corrupt record fails its checksum: it and everything after it go, the records before it stay") {
  TempDir dir;
  std::vector<model::StepRecord> written;
  std::string path = leaveSpool(dir, 8, &written);
  std::string bytes = readFile(path);
  auto offsets = entryOffsets(bytes);
  // One flipped bit in the payload of the 5th record (entry 2 + 4).
  bytes[offsets[6] + kSpoolEntryHeadBytes + 3] ^= 0x10;
  writeFile(path, bytes);

  Log log;
  StepSpool spool(optionsFor(dir, &log));
  Dictionary dict;
  REQUIRE(spool.adoptOrphan(&dict) == 4);
  CHECK(log.has("checksum mismatch"));
  takeAndCheck(spool, written, 4);
  model::StepRecord rec;
  CHECK_FALSE(spool.peek(&rec));
}

TEST_CASE("hostile lengths and garbage never crash and never allocate what they announce") {
  TempDir dir;
  std::vector<model::StepRecord> written;
  std::string path = leaveSpool(dir, 3, &written);
  std::string bytes = readFile(path);
  auto offsets = entryOffsets(bytes);

  SUBCASE("a length of 4 GiB") {
    bytes[offsets[3]] = bytes[offsets[3] + 1] = bytes[offsets[3] + 2] = bytes[offsets[3] + 3] = '\xff';
    writeFile(path, bytes);
    Log log;
    StepSpool spool(optionsFor(dir, &log));
    Dictionary dict;
    CHECK(spool.adoptOrphan(&dict) == 1);
    CHECK(log.has("over the limit"));
  }
  SUBCASE("a length just past the end of the file") {
    uint32_t len = static_cast<uint32_t>(bytes.size() - offsets[4]);  // entry overhead makes it overrun
    for (int i = 0; i < 4; ++i) bytes[offsets[4] + i] = static_cast<char>(len >> (8 * i));
    writeFile(path, bytes);
    Log log;
    StepSpool spool(optionsFor(dir, &log));
    Dictionary dict;
    CHECK(spool.adoptOrphan(&dict) == 2);
    CHECK(log.has("cut short"));
  }
  SUBCASE("a valid checksum over an unknown entry type") {
    std::string entry;
    ByteWriter w(&entry);
    w.putFixedLE(3, 4);
    w.putU8(9);
    w.putBytes("abc");
    w.putFixedLE(XXH3_64bits(entry.data(), entry.size()), 8);
    writeFile(path, bytes + entry);
    Log log;
    StepSpool spool(optionsFor(dir, &log));
    Dictionary dict;
    CHECK(spool.adoptOrphan(&dict) == 3);
    CHECK(log.has("unknown entry type 9"));
  }
  SUBCASE("a dictionary entry that checks but does not decode") {
    std::string entry;
    ByteWriter w(&entry);
    w.putFixedLE(16, 4);
    w.putU8(static_cast<uint8_t>(SpoolEntryType::kDictionary));
    w.putBytes(std::string(16, '\x7f'));
    w.putFixedLE(XXH3_64bits(entry.data(), entry.size()), 8);
    writeFile(path, bytes + entry);
    Log log;
    StepSpool spool(optionsFor(dir, &log));
    Dictionary dict;
    CHECK(spool.adoptOrphan(&dict) == 3);
    CHECK(log.has("torn or corrupt entry"));
  }
  SUBCASE("a file that is not a spool, under a spool's name, is removed") {
    writeFile(path, "not a spool at all, just some bytes");
    Log log;
    StepSpool spool(optionsFor(dir, &log));
    Dictionary dict;
    CHECK(spool.adoptOrphan(&dict) == 0);
    CHECK(log.has("no valid header"));
    CHECK(dir.files().empty());
  }
  SUBCASE("a file cut inside its header is removed") {
    writeFile(path, bytes.substr(0, kSpoolMagic.size() + 3));
    Log log;
    StepSpool spool(optionsFor(dir, &log));
    Dictionary dict;
    CHECK(spool.adoptOrphan(&dict) == 0);
    CHECK(dir.files().empty());
  }
}

TEST_CASE("the bound: appends beyond max_bytes are refused and counted, the file stays under it") {
  TempDir dir;
  Log log;
  simulate::SyntheticSteps gen(2, 6);
  auto o = optionsFor(dir, &log);
  o.max_bytes = 16 * 1024;
  StepSpool spool(o);
  int accepted = 0, refused = 0;
  for (int i = 0; i < 200; ++i) {
    Status s = spool.append(i == 0 ? dictionaryOf(gen) : Dictionary{}, gen.next());
    if (s.isOk()) {
      ++accepted;
      CHECK(refused == 0);  // refusals only once full
    } else {
      CHECK(s.code() == Status::Code::kResourceExhausted);
      ++refused;
    }
  }
  CHECK(accepted > 3);
  CHECK(refused > 0);
  auto st = spool.stats();
  CHECK(st.refused == static_cast<uint64_t>(refused));
  CHECK(st.records == static_cast<uint64_t>(accepted));
  CHECK(st.bytes <= o.max_bytes);
  struct stat fst{};
  REQUIRE(::stat(spool.path().c_str(), &fst) == 0);
  CHECK(static_cast<uint64_t>(fst.st_size) == st.bytes);
  CHECK_FALSE(st.failed);
}

TEST_CASE("a spool that cannot be written is off for good, with one log line") {
  Log log;
  StepSpoolOptions o{.dir = "/nonexistent/argus-spool-dir", .job = "j", .rank = 0, .max_bytes = uint64_t{1} << 20, .log = log.fn()};
  StepSpool spool(o);
  simulate::SyntheticSteps gen(0, 4);
  Status s = spool.append({}, gen.next());
  CHECK(s.code() == Status::Code::kIoError);
  CHECK(spool.append({}, gen.next()).code() == Status::Code::kIoError);
  CHECK(log.lines.size() == 1);
  CHECK(log.has("the spool is off"));
  auto st = spool.stats();
  CHECK(st.failed);
  CHECK(st.refused == 2);
  Dictionary dict;
  CHECK(spool.adoptOrphan(&dict) == 0);  // no directory: nothing to take over, no crash
}

TEST_CASE("a write cut short (file size limit, as a full disk) leaves no torn entry: the spool goes off, what it held stays whole") {
  TempDir dir;
  uint64_t kept = 0;
  {
    Log log;
    simulate::SyntheticSteps gen(2, 6);
    StepSpool spool(optionsFor(dir, &log));
    REQUIRE(spool.append(dictionaryOf(gen), gen.next()).isOk());
    uint64_t size = spool.stats().bytes;
    // The process may not grow a file past size + 1.5 records: the second append after this
    // one is cut short (EFBIG instead of SIGXFSZ while the signal is ignored).
    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = size + size / 2;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    Status s;
    int accepted = 1;
    for (int i = 0; i < 50 && s.isOk(); ++i) {
      s = spool.append({}, gen.next());
      accepted += s.isOk();
    }
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &old) == 0);
    ::signal(SIGXFSZ, old_handler);
    CHECK(s.code() == Status::Code::kIoError);
    CHECK(spool.stats().failed);
    CHECK(log.has("cannot write spool"));
    CHECK(spool.append({}, gen.next()).code() == Status::Code::kIoError);  // off for good
    struct stat st{};
    REQUIRE(::stat(spool.path().c_str(), &st) == 0);
    CHECK(static_cast<uint64_t>(st.st_size) == spool.stats().bytes);  // the partial entry is gone
    CHECK(spool.records() == static_cast<uint64_t>(accepted));
    kept = static_cast<uint64_t>(accepted);
  }
  // The file left behind reads back whole: no torn tail to report.
  Log log;
  StepSpool next(optionsFor(dir, &log));
  Dictionary dict;
  CHECK(next.adoptOrphan(&dict) == kept);
  CHECK_FALSE(log.has("torn"));
}
