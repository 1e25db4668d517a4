// FrameTable: code object -> frame id and frame text, cached so that steady sampling reads
// one small window per code object and does no string work (docs/capture/stacks.md,
// "Frames and stacks").
//
// A frame's text is "qualname (filename:firstlineno)", e.g. "Trainer.step (/w/train.py:42)":
// the function's first line, not the line executing, so that a function is one frame and a
// stack one id however its lines advance. co_name stands in for co_qualname on 3.10. The id
// is XXH3-64 of the text, so the same function keeps its id across code objects and runs.
//
// The cache is keyed by the code object's address and the fields the text is made of
// (filename, name pointers, first line), so a code object freed and another allocated at
// the same address cannot inherit its text. It has a fixed number of slots (direct-mapped):
// a miss overwrites a slot, the strings are read again on the next miss; memory stays
// bounded by the slots and their longest texts.
//
// Not thread-safe: the sampler thread's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "capture/stacks/memory_reader.h"
#include "capture/stacks/python_runtime.h"

namespace argus::capture::stacks {

// What identifies a frame's text: read from the code object each sample.
struct FrameKey {
  uint64_t code = 0;
  uint64_t filename = 0;
  uint64_t name = 0;  // co_qualname, or co_name on 3.10
  int32_t firstlineno = 0;
  bool valid = false;  // the code object read and had PyCode_Type
  bool operator==(const FrameKey&) const = default;
};

struct FrameTableStats {
  uint64_t hits = 0;
  uint64_t misses = 0;      // strings read
  uint64_t bad_code = 0;    // a code object that did not read or was not one
  uint64_t bad_strings = 0; // a name or filename that did not read as a compact str
};

class FrameTable {
 public:
  static constexpr const char* kBadFrameText = "[unreadable frame]";
  static constexpr size_t kMaxTextChars = 256;  // per name / filename; longer ones cut

  // REQUIRES: slots is a power of two.
  FrameTable(const PythonRuntime& runtime, MemoryReader& reader, size_t slots = 4096);

  // Reads the keys of `count` code objects in one batch, then their frame ids into ids[].
  // An unreadable code object gets the id of kBadFrameText (and an invalid key).
  void resolve(const uint64_t* codes, size_t count, FrameKey* keys, uint64_t* ids);
  // The text of a frame resolved before: from its slot, or read again when the slot was
  // taken since. Returns a reference valid until the next call.
  const std::string& text(const FrameKey& key);

  const FrameTableStats& stats() const { return stats_; }

  // The frame text for a qualified name, file and line (also what tests expect).
  static void formatFrame(const std::string& name, const std::string& file, int32_t line, std::string* out);
  static uint64_t idOfText(std::string_view text);

 private:
  struct Slot {
    FrameKey key;
    uint64_t id = 0;
    std::string text;
  };
  Slot& slotOf(const FrameKey& key);
  // Reads the key's strings into *out (kBadFrameText parts for what does not read).
  void describe(const FrameKey& key, std::string* out);
  // Reads a compact str object as UTF-8 into *out. False when it is not one.
  bool readString(uint64_t addr, std::string* out);

  const PythonRuntime rt_;
  MemoryReader& reader_;
  std::vector<Slot> slots_;
  const uint64_t bad_id_;
  std::string scratch_, name_, file_;
  std::vector<uint8_t> windows_;  // code object windows of one resolve() batch
  FrameTableStats stats_;
};

}  // namespace argus::capture::stacks
