#include "query/execution/physical_operator.h"

namespace argus::query {

std::vector<std::string> explainLines(const PhysicalOperator& root) {
  std::vector<std::string> lines;
  struct Walk {
    static void go(const PhysicalOperator& op, int depth, std::vector<std::string>& lines) {
      std::string line = op.describe();
      if (line.empty()) {  // an operator of the execution only (Gather): its input in its place
        for (const auto& c : op.children()) go(*c, depth, lines);
        return;
      }
      lines.push_back(std::string(static_cast<size_t>(depth) * 2, ' ') + line);
      for (const auto& c : op.children()) go(*c, depth + 1, lines);
    }
  };
  Walk::go(root, 0, lines);
  return lines;
}

}  // namespace argus::query
