#include "query/execution/physical_operator.h"

#include <cstdio>

namespace argus::query {

void PhysicalOperator::enableProfiles() {
  profile_ = std::make_shared<OperatorProfile>();
  for (auto& c : children_) c->enableProfiles();
}

bool PhysicalOperator::nextProfiled(DataChunk& chunk) {
  bool more = false;
  {
    const ProfileTimer timer(profile_.get());
    more = produce(chunk);
  }
  if (more) {
    profile_->rows += chunk.size();
    ++profile_->chunks;
  }
  return more;
}

namespace {

// "  (rows=N chunks=C time=T ms)", with " in K parts" when K split copies ran in its place.
std::string profileText(const OperatorProfile& p) {
  char buf[160];
  const uint32_t copies = p.copies.load();
  std::snprintf(buf, sizeof buf, "  (rows=%llu chunks=%llu time=%.3f ms%s%s)", static_cast<unsigned long long>(p.rows.load()),
                static_cast<unsigned long long>(p.chunks.load()), static_cast<double>(p.ns.load()) / 1e6, copies > 0 ? " in " : "",
                copies > 0 ? (std::to_string(copies) + " parts").c_str() : "");
  return buf;
}

}  // namespace

std::vector<std::string> explainLines(const PhysicalOperator& root, bool profiled) {
  std::vector<std::string> lines;
  struct Walk {
    static void go(const PhysicalOperator& op, int depth, bool profiled, std::vector<std::string>& lines) {
      std::string line = op.describe();
      if (line.empty()) {  // an operator of the execution only (Gather): its input in its place
        for (const auto& c : op.children()) go(*c, depth, profiled, lines);
        return;
      }
      if (profiled && op.profile() != nullptr) line += profileText(*op.profile());
      lines.push_back(std::string(static_cast<size_t>(depth) * 2, ' ') + line);
      for (const auto& c : op.children()) go(*c, depth + 1, profiled, lines);
    }
  };
  Walk::go(root, 0, profiled, lines);
  return lines;
}

}  // namespace argus::query
