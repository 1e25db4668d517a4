// StepSpool (see step_spool.h and docs/wire/spool.md).
#include "wire/step_spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "base/bytes.h"
#include "model/step_codec.h"

namespace argus::wire {
namespace {

// A process-wide counter: two spools of one process (tests) never share a name.
std::atomic<uint32_t> g_spool_seq{0};

std::string errnoText() { return std::strerror(errno); }

// "argus-spool-<job>-rank<rank>-pid": a file of this job and rank is this prefix, the pid,
// '-', a sequence number and ".spool". The job cannot make one name match another's
// prefix: after it come "-rank", digits and "-pid", then digits only.
std::string namePrefix(const std::string& job, uint32_t rank) {
  return "argus-spool-" + job + "-rank" + std::to_string(rank) + "-pid";
}

bool isOurs(std::string_view name, std::string_view prefix, std::string_view suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.substr(0, prefix.size()) != prefix ||
      name.substr(name.size() - suffix.size()) != suffix) {
    return false;
  }
  std::string_view mid = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  size_t dash = mid.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 == mid.size()) return false;
  for (size_t i = 0; i < mid.size(); ++i) {
    if (i != dash && (mid[i] < '0' || mid[i] > '9')) return false;
  }
  return true;
}

void appendEntry(SpoolEntryType type, std::string_view payload, std::string* out) {
  size_t start = out->size();
  ByteWriter w(out);
  w.putFixedLE(payload.size(), 4);
  w.putU8(static_cast<uint8_t>(type));
  w.putBytes(payload);
  w.putFixedLE(XXH3_64bits(out->data() + start, out->size() - start), 8);
}

std::string headerPayload(uint32_t rank, const std::string& job) {
  std::string p;
  ByteWriter w(&p);
  w.putVarint(kSpoolVersion);
  w.putVarint(rank);
  w.putString(job);
  return p;
}

uint64_t headerBytes(const StepSpoolOptions& o) {
  return kSpoolMagic.size() + kSpoolEntryOverheadBytes + headerPayload(o.rank, o.job).size();
}

// Dictionary entries in frames of about kDictChunkBytes each (one entry may be larger).
constexpr size_t kDictChunkBytes = size_t{1} << 20;
size_t entryBytes(const model::KernelDictEntry& e) { return 64 + e.name.size(); }
size_t entryBytes(const model::StackDictEntry& e) {
  size_t b = 32;
  for (const auto& f : e.frames) b += 16 + f.size();
  return b;
}
size_t entryBytes(const model::StringDictEntry& e) { return 32 + e.text.size(); }

void appendDictionary(const Dictionary& dict, std::string* out) {
  Dictionary chunk;
  size_t bytes = 0;
  auto emit = [&] {
    if (!chunk.empty()) appendEntry(SpoolEntryType::kDictionary, encodeDictionary(chunk), out);
    chunk = Dictionary{};
    bytes = 0;
  };
  auto add = [&](auto& list, const auto& e) {
    if (bytes + entryBytes(e) > kDictChunkBytes) emit();
    bytes += entryBytes(e);
    list.push_back(e);
  };
  for (const auto& e : dict.kernels) add(chunk.kernels, e);
  for (const auto& e : dict.stacks) add(chunk.stacks, e);
  for (const auto& e : dict.strings) add(chunk.strings, e);
  emit();
}

bool writeAllAt(int fd, const std::string& buf, uint64_t off) {
  size_t done = 0;
  while (done < buf.size()) {
    ssize_t n = ::pwrite(fd, buf.data() + done, buf.size() - done, static_cast<off_t>(off + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool readAllAt(int fd, char* buf, size_t n, uint64_t off) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, buf + done, n - done, static_cast<off_t>(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

Status decodeDictionary(std::string_view payload, Dictionary* out) {
  uint32_t body_bytes = 0;
  if (payload.size() < kFrameHeaderBytes) return Status::corruption("dictionary entry shorter than a frame header");
  FrameLimits limits;
  ARGUS_RETURN_IF_ERROR(parseFrameHeader(reinterpret_cast<const uint8_t*>(payload.data()), limits, &body_bytes));
  if (body_bytes != payload.size() - kFrameHeaderBytes) return Status::corruption("dictionary entry's frame length disagrees with the entry");
  FrameBody body;
  body.assign(payload.data() + kFrameHeaderBytes, body_bytes);
  ClientMessage m;
  ARGUS_RETURN_IF_ERROR(decodeClientMessage(body, limits, &m));
  if (m.kind != ClientMessage::Kind::kDictionary) return Status::corruption("dictionary entry holds another message kind");
  *out = std::move(m.dictionary);
  return Status::ok();
}

}  // namespace

StepSpool::StepSpool(StepSpoolOptions options) : options_(std::move(options)) {}

StepSpool::~StepSpool() {
  std::lock_guard wl(write_mu_);
  std::lock_guard lock(mu_);
  if (fd_ < 0) return;
  if (stats_.records == 0) {
    ::unlink(path_.c_str());
  } else {
    log("spool " + path_ + " keeps " + std::to_string(stats_.records) +
        " steps argusd has not acknowledged; the next run of this job and rank sends them");
  }
  closeFile();
}

void StepSpool::log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

std::string StepSpool::path() const {
  std::lock_guard lock(mu_);
  return path_;
}

uint64_t StepSpool::records() const {
  std::lock_guard lock(mu_);
  return stats_.records;
}

StepSpoolStats StepSpool::stats() const {
  std::lock_guard lock(mu_);
  StepSpoolStats s = stats_;
  s.bytes = fd_ >= 0 ? tail_ : 0;
  return s;
}

void StepSpool::closeFile() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
  fd_ = -1;
  path_.clear();
  tail_ = head_ = read_off_ = peeked_end_ = resend_until_ = 0;
  inflight_.clear();
}

Status StepSpool::createFile() {
  // Written under a temporary name and locked before it gets its real name, so that no
  // other process ever sees an unlocked live file (it would take it over).
  std::string prefix = namePrefix(options_.job, options_.rank) + std::to_string(::getpid()) + "-";
  std::string header(kSpoolMagic);
  appendEntry(SpoolEntryType::kHeader, headerPayload(options_.rank, options_.job), &header);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string path = options_.dir + "/" + prefix + std::to_string(g_spool_seq.fetch_add(1)) + ".spool";
    std::string tmp = path + ".tmp";
    int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return Status::ioError("cannot create " + tmp + ": " + errnoText());
    bool ok = ::flock(fd, LOCK_EX | LOCK_NB) == 0 && writeAllAt(fd, header, 0);
    int linked = ok ? ::link(tmp.c_str(), path.c_str()) : -1;
    int link_errno = errno;
    ::unlink(tmp.c_str());
    if (linked == 0) {
      std::lock_guard lock(mu_);
      fd_ = fd;
      path_ = path;
      tail_ = head_ = read_off_ = header.size();
      return Status::ok();
    }
    ::close(fd);
    if (ok && link_errno == EEXIST) continue;  // a stale file of an earlier process with our pid
    return Status::ioError("cannot create " + path + ": " + std::strerror(ok ? link_errno : errno));
  }
  return Status::ioError("cannot find a free spool file name in " + options_.dir);
}

Status StepSpool::append(const Dictionary& dict, const model::StepRecord& rec) {
  std::lock_guard wl(write_mu_);
  {
    std::lock_guard lock(mu_);
    if (stats_.failed) {
      ++stats_.refused;
      return Status::ioError("the spool is off after a write error");
    }
  }
  write_buf_.clear();
  if (!dict.empty()) appendDictionary(dict, &write_buf_);
  std::string payload;
  model::encodeStandalone(rec, &payload);
  if (payload.size() > kMaxSpoolEntryBytes || write_buf_.size() > options_.max_bytes) {
    std::lock_guard lock(mu_);
    ++stats_.refused;
    return Status::resourceExhausted("a step of " + std::to_string(payload.size() + write_buf_.size()) +
                                     " bytes (with its dictionary) is over the spool's entry limit");
  }
  appendEntry(SpoolEntryType::kRecord, payload, &write_buf_);
  {
    std::lock_guard lock(mu_);
    uint64_t base = fd_ >= 0 ? tail_ : headerBytes(options_);
    if (base + write_buf_.size() > options_.max_bytes) {
      ++stats_.refused;
      return Status::resourceExhausted("spool full (" + std::to_string(base) + " of " + std::to_string(options_.max_bytes) + " bytes)");
    }
  }
  // fd_ changes only under write_mu_ (held), so it may be read here without mu_.
  if (fd_ < 0) {
    Status s = createFile();
    if (!s.isOk()) {
      std::lock_guard lock(mu_);
      stats_.failed = true;
      ++stats_.refused;
      log(s.toString() + "; the spool is off, steps beyond the memory buffer are dropped (counted)");
      return s;
    }
  }
  uint64_t start;
  {
    std::lock_guard lock(mu_);
    start = tail_;
  }
  if (!writeAllAt(fd_, write_buf_, start)) {
    std::string why = errnoText();
    bool cut = ::ftruncate(fd_, static_cast<off_t>(start)) == 0;  // no torn entry left behind
    std::lock_guard lock(mu_);
    stats_.failed = true;
    ++stats_.refused;
    log("cannot write spool " + path_ + ": " + why + (cut ? "" : " (and cannot truncate it)") +
        "; the spool is off, steps beyond the memory buffer are dropped (counted)");
    return Status::ioError("cannot write spool " + path_ + ": " + why);
  }
  std::lock_guard lock(mu_);
  tail_ = start + write_buf_.size();
  ++stats_.records_written;
  ++stats_.records;
  return Status::ok();
}

Status StepSpool::readEntry(int fd, uint64_t off, uint64_t limit, Entry* entry) {
  if (limit - off < kSpoolEntryOverheadBytes) return Status::corruption("entry header cut short");
  char head[kSpoolEntryHeadBytes];
  if (!readAllAt(fd, head, sizeof head, off)) return Status::ioError("cannot read: " + errnoText());
  uint64_t len = 0;
  ByteReader r(std::string_view(head, sizeof head), "spool entry");
  ARGUS_RETURN_IF_ERROR(r.getFixedLE(&len, 4));
  uint8_t type = static_cast<uint8_t>(head[4]);
  if (len > kMaxSpoolEntryBytes) return Status::corruption("entry length " + std::to_string(len) + " is over the limit");
  if (limit - off - kSpoolEntryOverheadBytes < len) return Status::corruption("entry of " + std::to_string(len) + " bytes cut short");
  size_t total = kSpoolEntryOverheadBytes + len;
  read_buf_.resize(total);
  if (!readAllAt(fd, read_buf_.data(), total, off)) return Status::ioError("cannot read: " + errnoText());
  uint64_t want = 0;
  ByteReader tail(std::string_view(read_buf_).substr(total - 8), "spool entry");
  ARGUS_RETURN_IF_ERROR(tail.getFixedLE(&want, 8));
  if (XXH3_64bits(read_buf_.data(), total - 8) != want) return Status::corruption("checksum mismatch");
  if (type < static_cast<uint8_t>(SpoolEntryType::kHeader) || type > static_cast<uint8_t>(SpoolEntryType::kRecord)) {
    return Status::corruption("unknown entry type " + std::to_string(type));
  }
  entry->type = static_cast<SpoolEntryType>(type);
  entry->end = off + total;
  return Status::ok();
}

std::string_view StepSpool::payload() const {
  return std::string_view(read_buf_).substr(kSpoolEntryHeadBytes, read_buf_.size() - kSpoolEntryOverheadBytes);
}

bool StepSpool::peek(model::StepRecord* rec) {
  uint64_t limit;
  int fd;
  {
    std::lock_guard lock(mu_);
    if (fd_ < 0 || stats_.records == inflight_.size()) return false;  // nothing unsent (or lost)
    limit = tail_;
    fd = fd_;  // stays open: only this thread removes the file
  }
  uint64_t off = read_off_;
  while (off < limit) {
    Entry e;
    Status s = readEntry(fd, off, limit, &e);
    if (s.isOk() && e.type == SpoolEntryType::kRecord) s = model::decodeStandalone(payload(), rec);
    if (!s.isOk()) {
      // Our own file, written whole: only damage from outside gets here. What cannot be read
      // is lost; the records before it still replay, and no more are written behind it.
      std::lock_guard lock(mu_);
      uint64_t unsent = stats_.records - inflight_.size();
      stats_.lost += unsent;
      stats_.records -= unsent;
      stats_.failed = true;
      log("spool " + path_ + " unreadable at byte " + std::to_string(off) + " (" + s.toString() + "); " + std::to_string(unsent) +
          " spooled steps are lost");
      return false;
    }
    if (e.type == SpoolEntryType::kRecord) {
      read_off_ = off;
      peeked_end_ = e.end;
      return true;
    }
    off = e.end;  // header and dictionaries: the sender holds every entry in memory already
  }
  return false;
}

void StepSpool::take() {
  if (peeked_end_ == 0) return;
  if (peeked_end_ <= resend_until_) {
    std::lock_guard lock(mu_);
    ++stats_.records_resent;
  }
  inflight_.push_back(peeked_end_);
  read_off_ = peeked_end_;
  peeked_end_ = 0;
}

bool StepSpool::acknowledge(uint64_t n) {
  if (n > inflight_.size()) return false;
  if (n == 0) return true;
  head_ = inflight_[n - 1];
  inflight_.erase(inflight_.begin(), inflight_.begin() + static_cast<std::ptrdiff_t>(n));
  std::lock_guard lock(mu_);
  stats_.records -= n;
  stats_.records_acked += n;
  return true;
}

void StepSpool::rewind() {
  resend_until_ = std::max(resend_until_, read_off_);  // read_off_ is past every taken record
  inflight_.clear();
  read_off_ = head_;
  peeked_end_ = 0;
}

bool StepSpool::removeIfDrained() {
  std::lock_guard wl(write_mu_);
  std::lock_guard lock(mu_);
  if (fd_ < 0) return true;
  if (stats_.records != 0 || !inflight_.empty()) return false;
  ::unlink(path_.c_str());
  closeFile();
  return true;
}

uint64_t StepSpool::adoptOrphan(Dictionary* dict) {
  DIR* dir = ::opendir(options_.dir.c_str());
  if (dir == nullptr) return 0;
  std::string prefix = namePrefix(options_.job, options_.rank);
  std::vector<std::string> names;
  while (dirent* d = ::readdir(dir)) {
    std::string_view name = d->d_name;
    if (isOurs(name, prefix, ".spool") || isOurs(name, prefix, ".spool.tmp")) names.emplace_back(name);
  }
  ::closedir(dir);
  std::string expected_header = headerPayload(options_.rank, options_.job);
  for (const std::string& name : names) {
    std::string path = options_.dir + "/" + name;
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // its process is alive
      ::close(fd);
      continue;
    }
    struct stat st{};
    if (name.ends_with(".tmp") || ::fstat(fd, &st) != 0) {  // a creation cut short by a crash
      ::unlink(path.c_str());
      ::close(fd);
      continue;
    }
    uint64_t size = static_cast<uint64_t>(st.st_size);
    char magic[kSpoolMagic.size()] = {};
    Entry e{};
    bool header_ok = size >= kSpoolMagic.size() && readAllAt(fd, magic, sizeof magic, 0) &&
                     std::string_view(magic, sizeof magic) == kSpoolMagic &&
                     readEntry(fd, kSpoolMagic.size(), size, &e).isOk() && e.type == SpoolEntryType::kHeader &&
                     payload() == expected_header;
    if (!header_ok) {
      log("spool " + path + " has no valid header (not a version " + std::to_string(kSpoolVersion) + " spool of this job and rank); removed");
      ::unlink(path.c_str());
      ::close(fd);
      continue;
    }
    uint64_t first = e.end, off = e.end, records = 0;
    Dictionary found;
    Status bad;
    while (off < size) {
      bad = readEntry(fd, off, size, &e);
      if (bad.isOk() && e.type == SpoolEntryType::kDictionary) {
        Dictionary d;
        bad = decodeDictionary(payload(), &d);
        for (auto& k : d.kernels) found.kernels.push_back(std::move(k));
        for (auto& k : d.stacks) found.stacks.push_back(std::move(k));
        for (auto& k : d.strings) found.strings.push_back(std::move(k));
      } else if (bad.isOk() && e.type == SpoolEntryType::kHeader) {
        bad = Status::corruption("a second header");
      }
      if (!bad.isOk()) break;
      if (e.type == SpoolEntryType::kRecord) ++records;
      off = e.end;
    }
    if (off < size) {
      bool cut = ::ftruncate(fd, static_cast<off_t>(off)) == 0;
      log("spool " + path + ": torn or corrupt entry at byte " + std::to_string(off) + " (" + bad.toString() + "); " +
          std::to_string(size - off) + " bytes after it " + (cut ? "truncated" : "ignored"));
    }
    if (records == 0) {
      ::unlink(path.c_str());
      ::close(fd);
      continue;
    }
    std::lock_guard wl(write_mu_);
    std::lock_guard lock(mu_);
    if (fd_ >= 0) {  // REQUIRES violated: leave the file for a later run
      ::close(fd);
      return 0;
    }
    fd_ = fd;
    path_ = path;
    tail_ = off;
    head_ = read_off_ = first;
    stats_.records += records;
    stats_.records_adopted += records;
    *dict = std::move(found);
    log("spool " + path + " of an earlier run: " + std::to_string(records) + " steps to send");
    return records;
  }
  return 0;
}

}  // namespace argus::wire
