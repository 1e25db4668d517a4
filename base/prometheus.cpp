#include "base/prometheus.h"

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

void metric(std::string* out, std::string_view name, std::string_view type, std::string_view help, double value) {
  header(out, name, type, help);
  sample(out, name, {}, value);
}

}  // namespace argus::prometheus
