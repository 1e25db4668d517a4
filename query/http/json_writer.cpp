#include "query/http/json_writer.h"

#include <charconv>

#include "base/json_string.h"

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

void JsonWriter::writeString(std::string_view s) { appendJsonString(out_, s); }

}  // namespace argus::query
