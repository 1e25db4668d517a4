#include "query/http/json_writer.h"

#include <charconv>
#include <cstdio>

namespace argus::query {

JsonWriter& JsonWriter::value(double v) {
  separate();
  if (!std::isfinite(v)) {
    out_->append("null");
    return *this;
  }
  // Shortest text that reads back as the same double.
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out_->append(buf, static_cast<size_t>(end - buf));
  return *this;
}

void JsonWriter::writeString(std::string_view s) {
  out_->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out_->append("\\\""); break;
      case '\\': out_->append("\\\\"); break;
      case '\n': out_->append("\\n"); break;
      case '\r': out_->append("\\r"); break;
      case '\t': out_->append("\\t"); break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out_->append(buf);
        } else {
          out_->push_back(static_cast<char>(c));
        }
    }
  }
  out_->push_back('"');
}

}  // namespace argus::query
