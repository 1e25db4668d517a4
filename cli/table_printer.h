// TablePrinter: aligned text tables for the terminal (numbers right-aligned).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace argus::cli {

class TablePrinter {
 public:
  explicit TablePrinter(std::vector<std::string> header) : header_(std::move(header)) {}
  // REQUIRES: cells.size() == header size.
  void addRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::FILE* out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace argus::cli
