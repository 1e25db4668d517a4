#include "base/prometheus.h"

#include <cassert>
#include <cstdio>

namespace argus::prometheus {

void header(std::string* out, std::string_view name, std::string_view type, std::string_view help) {
  out->append("# HELP ").append(name).append(" ").append(help).append("\n");
  out->append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void sample(std::string* out, std::string_view name, std::string_view labels, double value) {
  out->append(name);
  if (!labels.empty()) out->append("{").append(labels).append("}");
  char buf[32];
  std::snprintf(buf, sizeof buf, " %.17g\n", value);  // integers below 2^53 print exactly
  out->append(buf);
}

std::string label(std::string_view key, std::string_view value) {
  std::string out(key);
  out += "=\"";
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string_view("\\n") : std::string_view(&c, 1);
  }
  out += '"';
  return out;
}

void metric(std::string* out, std::string_view name, std::string_view type, std::string_view help, double value) {
  header(out, name, type, help);
  sample(out, name, {}, value);
}

void histogram(std::string* out, std::string_view name, std::string_view help, std::span<const double> bounds_s,
               std::span<const uint64_t> counts, double sum_s) {
  assert(counts.size() == bounds_s.size() + 1 && "one count per bucket, +Inf included");
  header(out, name, "histogram", help);
  const std::string bucket = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  char le[48];
  for (size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    if (i < bounds_s.size()) {
      std::snprintf(le, sizeof le, "le=\"%g\"", bounds_s[i]);
    } else {
      std::snprintf(le, sizeof le, "le=\"+Inf\"");
    }
    sample(out, bucket, le, static_cast<double>(cumulative));
  }
  sample(out, std::string(name) + "_sum", {}, sum_s);
  sample(out, std::string(name) + "_count", {}, static_cast<double>(cumulative));
}

}  // namespace argus::prometheus
