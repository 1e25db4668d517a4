// WindowLayout: where each buffered row stands in one window (docs/query/language.md,
// "Window functions"): the rows in the window's order (partition keys, then ORDER BY keys,
// ties in input order), and per position its partition, its peers (equal ORDER BY keys) and
// its frame, as position ranges [start, end). Within a partition a frame's start and end
// never decrease from one row to the next, so window functions slide over the frames.
#pragma once

#include <cstdint>
#include <vector>

#include "query/common/vector.h"
#include "query/parser/ast.h"

namespace argus::query {

struct WindowLayout {
  std::vector<uint32_t> order;  // position -> buffered row
  std::vector<uint32_t> partition_start, partition_end;
  std::vector<uint32_t> peer_start, peer_end;     // only when built with peers (below)
  std::vector<uint32_t> frame_start, frame_end;  // start <= end; empty frames are possible
  bool identity = false;                         // order[p] == p (built presorted)
  // A ROWS frame whose bounds are both offsets from the row (n PRECEDING, CURRENT ROW, n
  // FOLLOWING), the end at or after the start: inside a partition, frames move one row on
  // per row except where a bound is clamped to the partition.
  bool rows_offsets = false;

  size_t size() const { return order.size(); }
  size_t memoryBytes() const { return order.capacity() * 4 * 7; }
};

struct WindowKeys {
  std::vector<const Vector*> partitions;  // flat, `rows` rows each
  std::vector<const Vector*> orders;
  std::vector<bool> desc, nulls_first;  // per ORDER BY key
};

// Fills *out for `rows` buffered rows. presorted: the rows already come in the window's order
// (the scan's), so they are not sorted. peers: fill peer_start and peer_end (ranking
// functions read them); a RANGE frame needs them anyway, and a presorted ROWS frame
// without them never looks at the ORDER BY keys. REQUIRES: a RANGE frame with an offset has
// exactly one numeric ORDER BY key (the binder checks).
void buildWindowLayout(const WindowKeys& keys, const WindowFrame& frame, bool presorted, bool peers, size_t rows, WindowLayout* out);

}  // namespace argus::query
