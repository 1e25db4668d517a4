#include "query/execution/window_layout.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "query/execution/sort_key.h"

namespace argus::query {

namespace {

using K = FrameBoundKind;

// Frame bounds for offset 0..n rows away, clamped to the partition.
uint32_t clampRows(int64_t p, uint32_t lo, uint32_t hi) { return static_cast<uint32_t>(std::clamp<int64_t>(p, lo, hi)); }

// The single ORDER BY key as a number ascending in window order (negated when DESC; NaN,
// the largest value, at the matching end), for RANGE offsets.
double rangeKey(const Vector& v, uint32_t row, bool desc) {
  double x = v.type == LogicalType::kDouble ? v.f64[row] : static_cast<double>(v.i64[row]);
  if (std::isnan(x)) x = std::numeric_limits<double>::infinity();
  return desc ? -x : x;
}

void rowsFrames(const WindowFrame& f, uint32_t ps, uint32_t pe, WindowLayout* l) {
  auto offset = [](const FrameBound& b) { return static_cast<int64_t>(b.offset); };
  for (uint32_t p = ps; p < pe; ++p) {
    const int64_t i = p;
    uint32_t s = ps, e = pe;
    switch (f.start.kind) {
      case K::kPreceding: s = clampRows(i - offset(f.start), ps, pe); break;
      case K::kCurrentRow: s = p; break;
      case K::kFollowing: s = clampRows(i + offset(f.start), ps, pe); break;
      default: break;
    }
    switch (f.end.kind) {
      case K::kPreceding: e = clampRows(i - offset(f.end) + 1, ps, pe); break;
      case K::kCurrentRow: e = p + 1; break;
      case K::kFollowing: e = clampRows(i + offset(f.end) + 1, ps, pe); break;
      default: break;
    }
    l->frame_start[p] = s;
    l->frame_end[p] = std::max(s, e);
  }
}

void rangeFrames(const WindowFrame& f, const WindowKeys& keys, uint32_t ps, uint32_t pe, WindowLayout* l) {
  const Vector* v = keys.orders.empty() ? nullptr : keys.orders[0];
  const bool desc = !keys.desc.empty() && keys.desc[0];
  // Rows with a NULL key are at one end of the partition; offsets reach only non-NULL rows.
  uint32_t ns = ps, ne = pe;
  if (v) {
    while (ns < ne && !v->isValid(l->order[ns])) ++ns;
    while (ne > ns && !v->isValid(l->order[ne - 1])) --ne;
  }
  auto positionOf = [&](double t, bool strict) {
    auto it = std::partition_point(l->order.begin() + ns, l->order.begin() + ne, [&](uint32_t r) {
      double k = rangeKey(*v, r, desc);
      return strict ? k <= t : k < t;
    });
    return static_cast<uint32_t>(it - l->order.begin());
  };
  for (uint32_t p = ps; p < pe; ++p) {
    const bool offset_row = v && p >= ns && p < ne;
    const double k = offset_row ? rangeKey(*v, l->order[p], desc) : 0;
    auto bound = [&](const FrameBound& b, bool is_end) -> uint32_t {
      switch (b.kind) {
        case K::kUnboundedPreceding: return ps;
        case K::kUnboundedFollowing: return pe;
        case K::kCurrentRow: return is_end ? l->peer_end[p] : l->peer_start[p];
        case K::kPreceding:
          if (!offset_row) return is_end ? l->peer_end[p] : l->peer_start[p];
          return positionOf(k - b.offset, is_end);
        case K::kFollowing:
          if (!offset_row) return is_end ? l->peer_end[p] : l->peer_start[p];
          return positionOf(k + b.offset, is_end);
      }
      return ps;
    };
    uint32_t s = bound(f.start, false), e = bound(f.end, true);
    l->frame_start[p] = s;
    l->frame_end[p] = std::max(s, e);
  }
}

}  // namespace

void buildWindowLayout(const WindowKeys& keys, const WindowFrame& frame, bool presorted, bool peers, size_t rows, WindowLayout* l) {
  peers = peers || frame.unit == FrameUnit::kRange;
  std::vector<SortKeyColumn> part, ord;
  for (const Vector* v : keys.partitions) part.push_back(encodeSortKey(*v, rows, false, false));
  if (peers || !presorted) {
    for (size_t i = 0; i < keys.orders.size(); ++i) ord.push_back(encodeSortKey(*keys.orders[i], rows, keys.desc[i], keys.nulls_first[i]));
  }

  l->order.resize(rows);
  std::iota(l->order.begin(), l->order.end(), 0u);
  if (!presorted) {
    std::sort(l->order.begin(), l->order.end(), [&](uint32_t a, uint32_t b) {
      for (const SortKeyColumn& k : part) {
        if (int c = k.compare(a, b)) return c < 0;
      }
      for (const SortKeyColumn& k : ord) {
        if (int c = k.compare(a, b)) return c < 0;
      }
      return a < b;  // ties keep their input order
    });
  }
  auto same = [](const std::vector<SortKeyColumn>& cols, uint32_t a, uint32_t b) {
    for (const SortKeyColumn& k : cols) {
      if (k.compare(a, b) != 0) return false;
    }
    return true;
  };
  for (auto* v : {&l->partition_start, &l->partition_end, &l->frame_start, &l->frame_end}) v->resize(rows);
  for (auto* v : {&l->peer_start, &l->peer_end}) v->resize(peers ? rows : 0);
  uint32_t ps = 0;
  while (ps < rows) {
    uint32_t pe = ps + 1;
    while (pe < rows && same(part, l->order[pe - 1], l->order[pe])) ++pe;
    for (uint32_t p = ps; p < pe; ++p) {
      l->partition_start[p] = ps;
      l->partition_end[p] = pe;
    }
    if (peers) {
      uint32_t gs = ps;
      for (uint32_t p = ps; p < pe; ++p) {
        if (p > ps && !same(ord, l->order[p - 1], l->order[p])) {
          for (uint32_t q = gs; q < p; ++q) l->peer_end[q] = p;
          gs = p;
        }
        l->peer_start[p] = gs;
      }
      for (uint32_t q = gs; q < pe; ++q) l->peer_end[q] = pe;
    }
    if (frame.unit == FrameUnit::kRows) {
      rowsFrames(frame, ps, pe, l);
    } else {
      rangeFrames(frame, keys, ps, pe, l);
    }
    ps = pe;
  }
}

}  // namespace argus::query
