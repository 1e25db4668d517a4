// Physical planner: logical plan -> physical operators. Fuses ORDER BY with a LIMIT above
// it into a top-N sort; SELECT DISTINCT becomes a hash aggregate without aggregates.
#pragma once

#include "query/execution/physical_operator.h"
#include "query/planner/logical_plan.h"
#include "storage/store.h"

namespace argus::query {

PhysicalOperatorPtr createPhysicalPlan(LogicalOperator& plan, QueryContext& ctx, const storage::Store& store);

}  // namespace argus::query
