#include "cli/shell_history.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace argus::cli {

namespace {

std::string escaped(const std::string& entry) {
  std::string out;
  for (char c : entry) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out.push_back(c);
  }
  return out;
}

std::string unescaped(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      ++i;
      out.push_back(line[i] == 'n' ? '\n' : line[i]);
    } else {
      out.push_back(line[i]);
    }
  }
  return out;
}

}  // namespace

std::string ShellHistory::defaultPath() {
  if (const char* path = std::getenv("ARGUS_HISTORY"); path != nullptr) return path;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return std::string(home) + "/.argus_history";
  return "";
}

ShellHistory::ShellHistory(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  std::ifstream in(path_);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) entries_.push_back(unescaped(line));
  }
  if (entries_.size() > kMaxEntries) entries_.erase(entries_.begin(), entries_.end() - kMaxEntries);
}

void ShellHistory::add(const std::string& entry) {
  if (entry.empty() || (!entries_.empty() && entries_.back() == entry)) return;
  entries_.push_back(entry);
  if (entries_.size() > kMaxEntries) entries_.erase(entries_.begin());
  if (path_.empty()) return;
  if (Status s = save(); !s.isOk() && !warned_) {
    std::fprintf(stderr, "argus shell: history is not saved: %s\n", s.message().c_str());
    warned_ = true;
  }
}

Status ShellHistory::save() const {
  // Written aside and renamed, so a shell that dies while writing leaves the old file whole.
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const std::string& e : entries_) out << escaped(e) << '\n';
    out.flush();
    if (!out) return Status::ioError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) return Status::ioError("cannot rename " + tmp + " to " + path_);
  return Status::ok();
}

}  // namespace argus::cli
