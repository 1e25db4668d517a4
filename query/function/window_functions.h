// Window functions (docs/query/language.md, "Window functions"): ranking (row_number, rank,
// dense_rank), offsets (lag, lead), frame ends (first_value, last_value), zscore and mad, and
// every aggregate over a frame. A WindowFunction fills one result per row of the buffered
// input from the window's layout (query/execution/window_layout.h): one call per window, a
// loop over the rows in the window's order inside.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "query/common/arena.h"
#include "query/common/errors.h"
#include "query/common/query_context.h"
#include "query/common/vector.h"
#include "query/execution/window_layout.h"
#include "query/function/aggregate_function.h"

namespace argus::query {

enum class WindowFunctionKind : uint8_t { kRowNumber, kRank, kDenseRank, kLag, kLead, kFirstValue, kLastValue, kZscore, kMad, kAggregate };

// The functions that exist only over a window; false for any other name (an aggregate may
// still be used over a window).
bool windowFunctionKind(std::string_view name, WindowFunctionKind* out);

struct WindowCall {
  WindowFunctionKind kind = WindowFunctionKind::kAggregate;
  const AggregateFunction* aggregate = nullptr;  // kAggregate
  std::vector<Value> constants;                  // lag/lead: offset, default; quantile's q
  LogicalType type = LogicalType::kNull;         // the result's
  SourcePos pos;
};

class WindowFunction {
 public:
  virtual ~WindowFunction() = default;
  // args: the per-row arguments, flat, one row per buffered row. out: reset to the result
  // type with one row per buffered row, filled in buffered-row order. Strings and
  // histograms of the results go into arena. Checks ctx's deadline now and then.
  virtual void evaluate(const WindowLayout& layout, const std::vector<const Vector*>& args, Vector& out, Arena& arena,
                        QueryContext& ctx) = 0;
};

std::unique_ptr<WindowFunction> makeWindowFunction(const WindowCall& call, const std::vector<LogicalType>& arg_types);

// Whether the function reads the layout's peers (WindowLayout::peer_start, peer_end).
inline bool readsPeers(const WindowCall& call) { return call.kind == WindowFunctionKind::kRank || call.kind == WindowFunctionKind::kDenseRank; }

}  // namespace argus::query
