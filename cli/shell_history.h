// ShellHistory: `argus shell`'s history, kept in a file ($ARGUS_HISTORY, else
// ~/.argus_history) so the next shell recalls it. One entry per line; a statement written over
// several lines is one entry, its newlines stored as "\n" and backslashes as "\\". The newest
// kMaxEntries are kept.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace argus::cli {

class ShellHistory {
 public:
  static constexpr size_t kMaxEntries = 1000;

  // $ARGUS_HISTORY, else $HOME/.argus_history, else "" (no file: history lasts the session).
  static std::string defaultPath();

  // Reads `path` when it exists; a missing file is an empty history.
  explicit ShellHistory(std::string path);

  // Oldest first.
  const std::vector<std::string>& entries() const { return entries_; }

  // Appends `entry` unless it is empty or repeats the newest, and rewrites the file. A file
  // that cannot be written is said once on stderr; the history goes on in memory.
  void add(const std::string& entry);

 private:
  Status save() const;

  std::string path_;
  std::vector<std::string> entries_;
  bool warned_ = false;
};

}  // namespace argus::cli
