// StepSpool: the StepSender's local spool file (format and rules: docs/wire/spool.md).
//
// When argusd is unreachable for longer than the sender's memory buffer lasts, records go
// to an append-only file instead of being dropped; when argusd is back the sender replays
// them, oldest first, and each record leaves the file's live region only once argusd
// acknowledged it. The file is removed when nothing in it is left unacknowledged.
//
// Why the sender owns the spool (not the capture Collector): only the sender knows which
// records argusd acknowledged and in which order a session sends them; a record may leave
// the spool exactly when the sender's acks say so, and the spool's records must be sent
// after the older records still in memory and before any newer one. The Collector only
// configures it (directory, bound).
//
// The file: "ARGSPOOL", then entries, each [u32 length][u8 type][payload][u64 XXH3-64 of
// the length, type and payload]. The first entry is the header (version, rank, job); a
// dictionary entry (a wire Dictionary frame) precedes the first record that needs it; a
// record entry is a standalone keyframe (model::encodeStandalone). So a file decodes on its
// own, and a later process of the same job and rank can take over a file whose process died
// (adoptOrphan): each live file is flock()ed by its process, so a free lock means its
// writer is gone. A torn or corrupt tail (a crash mid-write, a damaged disk) fails its
// checksum and is truncated with one log line.
//
// No fsync: a spooled record survives the death of its process (the page cache keeps it),
// not the loss of the machine.
//
// Threads: append() may be called from any thread (appends are serialized inside); peek(),
// take(), acknowledge(), rewind(), removeIfDrained() and adoptOrphan() from one reader
// thread (the sender's I/O thread). stats() and records() from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "model/step_record.h"
#include "wire/frame.h"
#include "wire/messages.h"

namespace argus::wire {

inline constexpr std::string_view kSpoolMagic = "ARGSPOOL";
inline constexpr uint32_t kSpoolVersion = 1;
// An entry's payload is at most this many bytes (argusd's largest frame): a longer length
// is corruption, refused before anything is allocated for it.
inline constexpr uint32_t kMaxSpoolEntryBytes = kDefaultMaxFrameBytes;
// Entry framing: u32 length + u8 type before the payload, u64 checksum after it.
inline constexpr size_t kSpoolEntryHeadBytes = 5;
inline constexpr size_t kSpoolEntryOverheadBytes = kSpoolEntryHeadBytes + 8;

enum class SpoolEntryType : uint8_t { kHeader = 1, kDictionary = 2, kRecord = 3 };

struct StepSpoolOptions {
  std::string dir;  // the file is created here on the first append
  std::string job;
  uint32_t rank = 0;
  uint64_t max_bytes = uint64_t{1} << 30;  // the file never grows beyond; appends are refused
  std::function<void(std::string_view)> log;  // one line per event worth telling (may be empty)
};

struct StepSpoolStats {
  uint64_t records_written = 0;  // appended by this process
  uint64_t records_adopted = 0;  // taken over from an earlier process's file
  uint64_t records_acked = 0;    // released after argusd acknowledged them
  uint64_t records_resent = 0;   // read again after a reconnect
  uint64_t refused = 0;          // appends refused: the bound reached, or the spool off
  uint64_t lost = 0;             // records found unreadable while replaying
  uint64_t records = 0;          // in the file and not acknowledged, now
  uint64_t bytes = 0;            // the file's size now (0: no file)
  bool failed = false;           // a write failed: the spool takes no more records
};

class StepSpool {
 public:
  // Creates nothing yet: the file appears with the first append (or adoption).
  explicit StepSpool(StepSpoolOptions options);
  // Closes the file; removes it when it holds no unacknowledged record, else leaves it for
  // a later process of the same job and rank (adoptOrphan).
  ~StepSpool();
  StepSpool(const StepSpool&) = delete;
  StepSpool& operator=(const StepSpool&) = delete;

  // Appends `dict` (when not empty) and then `rec`, both or neither.
  // Returns ResourceExhausted when the file would exceed max_bytes, IOError when the file
  // cannot be created or written (the spool then refuses every later append; one log line).
  // REQUIRES: rec is canonical.
  Status append(const Dictionary& dict, const model::StepRecord& rec);

  // Reader: reads the oldest record not yet taken in this session into *rec; false when
  // there is none. Calling it again without take() returns the same record. A record that
  // cannot be read back drops it and everything after it (counted in `lost`, one log line).
  bool peek(model::StepRecord* rec);
  // The record last returned by peek() is sent.
  void take();
  // The n oldest taken records are durable. Returns false (and changes nothing) when fewer
  // than n are in flight.
  bool acknowledge(uint64_t n);
  uint64_t inFlight() const { return inflight_.size(); }
  // A new session: unacknowledged records are read again, oldest first.
  void rewind();
  // When no record is left unacknowledged, removes the file and returns true (the next
  // append starts a new one). The caller makes sure no append is running.
  bool removeIfDrained();

  // Looks in options.dir for spool files of this job and rank left by processes that are
  // gone, and takes over the first with records: its torn tail truncated, its dictionary
  // entries added to *dict (the caller registers them), its records next in line for
  // peek(). Files without records are removed. Returns the records adopted (0: none).
  // REQUIRES: nothing appended yet.
  uint64_t adoptOrphan(Dictionary* dict);

  uint64_t records() const;  // unacknowledged
  StepSpoolStats stats() const;
  std::string path() const;

 private:
  struct Entry {
    SpoolEntryType type;
    uint64_t end;  // offset after the entry
  };
  Status createFile();  // under write_mu_
  // Reads the entry at `off` (below `limit`) into read_buf_; payload() views it.
  Status readEntry(int fd, uint64_t off, uint64_t limit, Entry* entry);
  std::string_view payload() const;
  void log(const std::string& line) const;
  void closeFile();  // under write_mu_ and mu_

  const StepSpoolOptions options_;
  std::mutex write_mu_;        // serializes appends, file creation and removal
  std::string write_buf_;      // GUARDED_BY(write_mu_)
  mutable std::mutex mu_;      // guards the fields below that the writer also touches
  int fd_ = -1;
  std::string path_;
  uint64_t tail_ = 0;          // end of the last whole entry
  StepSpoolStats stats_;
  // Reader thread only.
  uint64_t head_ = 0;          // first entry not acknowledged
  uint64_t read_off_ = 0;      // next entry to read in this session
  uint64_t peeked_end_ = 0;    // end of the record peek() returned (0: none pending)
  uint64_t resend_until_ = 0;  // records ending at or before this were sent in an earlier session
  std::deque<uint64_t> inflight_;  // end offsets of taken, unacknowledged records
  std::string read_buf_;
};

}  // namespace argus::wire
