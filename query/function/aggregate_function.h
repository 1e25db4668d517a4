// Aggregate functions (docs/query/language.md, "Aggregate functions"). An AggregateState
// holds the running state of one aggregate for every group of a query and is updated a
// chunk at a time: one virtual call per chunk, a typed loop inside. NULL arguments are
// skipped (count(*) counts every row). Groups with no non-NULL input finish as NULL,
// except count, which finishes as 0.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "query/common/arena.h"
#include "query/common/errors.h"
#include "query/common/value.h"
#include "query/common/vector.h"

namespace argus::query {

// Rows in runs of one group: run r is rows [starts[r], starts[r + 1]) of group groups[r].
struct GroupRuns {
  const uint32_t* groups = nullptr;
  const uint32_t* starts = nullptr;  // count + 1 entries
  size_t count = 0;
};

// Writes each row's group from the runs into groups[0, starts[count]).
inline void expandRuns(const GroupRuns& runs, uint32_t* groups) {
  for (size_t r = 0; r < runs.count; ++r) std::fill(groups + runs.starts[r], groups + runs.starts[r + 1], runs.groups[r]);
}

class AggregateState {
 public:
  virtual ~AggregateState() = default;
  // Makes room for groups [0, groups); new groups start empty.
  virtual void resize(size_t groups) = 0;
  // args: the per-row arguments (none for count(*)), `count` rows each, dense or constant.
  // groups: the group of each row; null when every row belongs to group 0.
  virtual void update(const Vector* const* args, const uint32_t* groups, size_t count) = 0;
  // Rows whose groups come in runs (a GROUP BY key the scan delivers clustered, as it does
  // rank) can be folded a run at a time: the group is looked up once per run, and the state
  // adds up a run's values in one loop. foldsRuns says whether this state does that for
  // these arguments; updateRuns, called only where it does, takes the same rows as update.
  // AggregateState's own expands the runs to a group per row and calls update.
  virtual bool foldsRuns(const Vector* const* args) const {
    (void)args;
    return false;
  }
  virtual void updateRuns(const Vector* const* args, const GroupRuns& runs);
  // Writes the result of groups [0, groups) into out (reset to the return type); strings
  // and histograms go into arena.
  virtual void finalize(size_t groups, Vector& out, Arena& arena) = 0;
  // Heap bytes held, for the memory cap.
  virtual size_t memoryBytes() const = 0;
  // Parallel aggregation: each thread updates a state of its own over its part of the input,
  // then they are merged. merge folds other's groups [0, groups) into this state's, group g
  // into group into[g] (this state already sized to hold it); other is the same aggregate
  // and may be left emptied. Only called when mergeable().
  virtual void merge(AggregateState& other, const uint32_t* into, size_t groups) = 0;
  // False where merged parts could answer otherwise than one state over the rows in order:
  // argmin/argmax give a tie to the first row, which the parts cannot tell apart.
  virtual bool mergeable() const { return true; }

  // Aggregates over one argument share the values one of them keeps (median's, a quantile's,
  // mad's): keepsValues says a state keeps every non-NULL value per group; readingFrom(owner)
  // returns a state that answers this aggregate from owner's values (an aggregate over the
  // same argument, owner->keepsValues()), or null where it cannot. A reader is never updated
  // nor merged (the owner takes the rows and the parts' values), only finalized, after the
  // owner's rows are all in. So p50, p90 and p99 of one column keep its values once, and a
  // max beside a median takes no pass of its own over the rows.
  virtual bool keepsValues() const { return false; }
  virtual std::unique_ptr<AggregateState> readingFrom(AggregateState& owner) const {
    (void)owner;
    return nullptr;
  }
};

struct AggregateParams {
  std::vector<Value> constants;  // constant arguments after the per-row ones (quantile's q)
  SourcePos pos;
  std::string name;
};

struct AggregateFunction {
  std::string name;
  std::vector<LogicalType> args;  // per-row arguments, then constant ones
  size_t row_args = 1;            // how many of args are per-row (the rest must be constants)
  LogicalType ret = LogicalType::kNull;
  std::function<std::unique_ptr<AggregateState>(const AggregateParams& params)> make;
};

// Wraps inner so that it sees each (group, value) once: agg(DISTINCT x).
std::unique_ptr<AggregateState> makeDistinctAggregate(std::unique_ptr<AggregateState> inner, LogicalType arg_type);

}  // namespace argus::query
