// JsonWriter: appends JSON to a string with correct escaping. Minimal by design: the
// HTTP surface writes objects, arrays, strings and numbers; NaN and infinities, which JSON
// cannot hold, are written as null.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace argus::query {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  JsonWriter& beginObject() { return open('{'); }
  JsonWriter& endObject() { return close('}'); }
  JsonWriter& beginArray() { return open('['); }
  JsonWriter& endArray() { return close(']'); }

  JsonWriter& key(std::string_view k) {
    separate();
    writeString(k);
    out_->push_back(':');
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(std::string_view s) {
    separate();
    writeString(s);
    return *this;
  }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(int64_t v) {
    separate();
    out_->append(std::to_string(v));
    return *this;
  }
  JsonWriter& value(uint64_t v) {
    separate();
    out_->append(std::to_string(v));
    return *this;
  }
  JsonWriter& value(uint32_t v) { return value(static_cast<uint64_t>(v)); }
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(double v);
  JsonWriter& value(bool v) {
    separate();
    out_->append(v ? "true" : "false");
    return *this;
  }
  // Appends `json`, already valid JSON text, as one value.
  JsonWriter& raw(std::string_view json) {
    separate();
    out_->append(json);
    return *this;
  }
  JsonWriter& null() {
    separate();
    out_->append("null");
    return *this;
  }

 private:
  JsonWriter& open(char c) {
    separate();
    out_->push_back(c);
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    out_->push_back(c);
    first_.pop_back();
    return *this;
  }
  // Writes the comma between siblings; a value right after its key needs none.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_->push_back(',');
    first_.back() = false;
  }
  void writeString(std::string_view s);

  std::string* out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace argus::query
