#include "query/execution/window_layout.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "query/execution/equal_run.h"
#include "query/execution/sort_key.h"

namespace argus::query {

namespace {

using K = FrameBoundKind;

// The single ORDER BY key as a number ascending in window order (negated when DESC; NaN,
// the largest value, at the matching end), for RANGE offsets.
double rangeKey(const Vector& v, uint32_t row, bool desc) {
  double x = v.type == LogicalType::kDouble ? v.f64[row] : static_cast<double>(v.i64[row]);
  if (std::isnan(x)) x = std::numeric_limits<double>::infinity();
  return desc ? -x : x;
}

// A ROWS bound at a fixed distance from its row: the distance (an end is past its row);
// false for a partition edge (UNBOUNDED).
bool rowsDelta(const FrameBound& b, bool is_end, int64_t* delta) {
  switch (b.kind) {
    case K::kUnboundedPreceding:
    case K::kUnboundedFollowing: return false;
    case K::kPreceding: *delta = -static_cast<int64_t>(b.offset); break;  // the parser bounds offsets by 1e15
    case K::kFollowing: *delta = static_cast<int64_t>(b.offset); break;
    case K::kCurrentRow: *delta = 0; break;
  }
  if (is_end) ++*delta;
  return true;
}

// One bound of every row's ROWS frame in [ps, pe): row + delta clamped to the partition, in
// three runs (clamped low, row + delta, clamped high) rather than a clamp per row.
void rowsBound(const FrameBound& b, bool is_end, uint32_t ps, uint32_t pe, uint32_t* out) {
  int64_t delta = 0;
  if (!rowsDelta(b, is_end, &delta)) {
    std::fill(out + ps, out + pe, b.kind == K::kUnboundedPreceding ? ps : pe);
    return;
  }
  const int64_t lo = ps, hi = pe;
  const auto low_end = static_cast<uint32_t>(std::clamp(lo - delta, lo, hi));       // first row not clamped to ps
  const auto high_start = static_cast<uint32_t>(std::clamp(hi - delta + 1, lo, hi));  // first row clamped to pe
  std::fill(out + ps, out + low_end, ps);
  const auto shift = static_cast<uint32_t>(delta);  // modulo 2^32: row + shift lies in [ps, pe] here
  for (uint32_t p = low_end; p < high_start; ++p) out[p] = p + shift;
  std::fill(out + std::max(low_end, high_start), out + pe, pe);
}

void rowsFrames(const WindowFrame& f, uint32_t ps, uint32_t pe, WindowLayout* l) {
  uint32_t* const start = l->frame_start.data();
  uint32_t* const end = l->frame_end.data();
  rowsBound(f.start, false, ps, pe, start);
  rowsBound(f.end, true, ps, pe, end);
  // An end can fall before its start only when it lies fewer rows ahead (1 PRECEDING AND
  // 3 PRECEDING): clamping keeps the order of bounds of the same row.
  int64_t ds = 0, de = 0;
  if (rowsDelta(f.start, false, &ds) && rowsDelta(f.end, true, &de) && de < ds) {
    for (uint32_t p = ps; p < pe; ++p) end[p] = std::max(start[p], end[p]);
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

// The end of the run of presorted rows from `from` (< to) on whose key v agrees.
uint32_t keyRunEnd(const Vector& v, uint32_t from, uint32_t to) {
  if ((v.type == LogicalType::kBigInt || v.type == LogicalType::kId) && v.allValid()) {
    return static_cast<uint32_t>(equalRunEnd(v.i64.data(), from, to));  // the common case (rank, job)
  }
  uint32_t p = from + 1;
  while (p < to && sameSortKey(v, p - 1, p)) ++p;
  return p;
}

}  // namespace

void buildWindowLayout(const WindowKeys& keys, const WindowFrame& frame, bool presorted, bool peers, size_t rows, WindowLayout* l) {
  peers = peers || frame.unit == FrameUnit::kRange;
  std::vector<SortKeyColumn> part, ord;
  if (!presorted) {
    for (const Vector* v : keys.partitions) part.push_back(encodeSortKey(*v, rows, false, false));
  }
  if (peers || !presorted) {
    for (size_t i = 0; i < keys.orders.size(); ++i) ord.push_back(encodeSortKey(*keys.orders[i], rows, keys.desc[i], keys.nulls_first[i]));
  }

  l->order.resize(rows);
  std::iota(l->order.begin(), l->order.end(), 0u);
  l->identity = presorted;
  int64_t ds = 0, de = 0;
  l->rows_offsets = frame.unit == FrameUnit::kRows && rowsDelta(frame.start, false, &ds) && rowsDelta(frame.end, true, &de) && de >= ds;
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
  // Where the partition starting at position ps ends.
  auto partitionEnd = [&](uint32_t ps) {
    const uint32_t n = static_cast<uint32_t>(rows);
    if (presorted) {  // positions are rows: each key's run from ps, the shortest wins
      uint32_t pe = n;
      for (const Vector* v : keys.partitions) pe = std::min(pe, keyRunEnd(*v, ps, pe));
      return pe;
    }
    uint32_t pe = ps + 1;
    while (pe < n && same(part, l->order[pe - 1], l->order[pe])) ++pe;
    return pe;
  };
  for (auto* v : {&l->partition_start, &l->partition_end, &l->frame_start, &l->frame_end}) v->resize(rows);
  for (auto* v : {&l->peer_start, &l->peer_end}) v->resize(peers ? rows : 0);
  uint32_t ps = 0;
  while (ps < rows) {
    const uint32_t pe = partitionEnd(ps);
    std::fill(l->partition_start.begin() + ps, l->partition_start.begin() + pe, ps);
    std::fill(l->partition_end.begin() + ps, l->partition_end.begin() + pe, pe);
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
