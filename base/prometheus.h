// Prometheus text exposition format (version 0.0.4), shared by argusd's /metrics writers
// (ingest counters, store and HTTP gauges).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace argus::prometheus {

// "# HELP name help" and "# TYPE name type" lines.
void header(std::string* out, std::string_view name, std::string_view type, std::string_view help);
// One sample line: "name{labels} value"; `labels` without braces ("code=\"2xx\""), or empty.
void sample(std::string* out, std::string_view name, std::string_view labels, double value);
// `key="value"` for a label, the value escaped as the format asks (backslash, quote, newline).
std::string label(std::string_view key, std::string_view value);
// A metric with one unlabelled sample: header() then sample().
void metric(std::string* out, std::string_view name, std::string_view type, std::string_view help, double value);

// A histogram: header(), cumulative NAME_bucket{le="..."} samples for `bounds_s` (upper
// bounds in seconds) and +Inf, NAME_sum and NAME_count. counts[i] is the number of
// observations in bucket i alone. REQUIRES: counts.size() == bounds_s.size() + 1.
void histogram(std::string* out, std::string_view name, std::string_view help, std::span<const double> bounds_s,
               std::span<const uint64_t> counts, double sum_s);

}  // namespace argus::prometheus
