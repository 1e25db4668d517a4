// Light rows: the one mapping from a StepRecord to the steps and events tables (head
// entries carry it, sealing appends it) puts each field under its schema column.
#include "storage/light_rows.h"

#include <doctest/doctest.h>

#include "storage/table_block.h"

using namespace argus;
using namespace argus::storage;

namespace {

model::StepRecord sample() {
  model::StepRecord r;
  r.step = 9;
  r.start_ns = 1'700'000'000'000'000'000;
  r.end_ns = r.start_ns + 5'000'000;
  r.iter_ns = 5'000'000;
  r.flags = model::kStepInferred;
  for (int p = 0; p < model::kPhaseColumnCount; ++p) r.phase_ns[p] = 1000 * (p + 1);
  model::CollectiveStat c;
  c.total_ns = 900;
  c.wait_ns = 200;
  r.collectives.push_back(c);
  r.events.push_back(model::EventRecord{model::EventKind::kMarker, r.start_ns + 1, 0, 42});
  r.events.push_back(model::EventRecord{model::EventKind::kDroppedEvents, r.start_ns + 2, UINT64_MAX, 0});
  return r;
}

// The block's value of `column` in row `row`.
int64_t at(const TableBlock& b, const char* column, size_t row = 0) {
  const ColumnDef* c = findColumn(b.table, column);
  REQUIRE(c != nullptr);
  return b.columns[c->id].ints.at(row);
}

}  // namespace

TEST_CASE("a light row holds every stored column of its table, ids 3 up, and nothing else") {
  for (Table t : kLightTables) {
    CAPTURE(tableName(t));
    size_t stored = 0;
    for (const ColumnDef& c : tableColumns(t)) {
      if (c.id < kFirstStoredColumnId) continue;
      CHECK(c.id == kFirstStoredColumnId + stored);
      ++stored;
    }
    CHECK(lightColumns(t) == stored);
    std::vector<int64_t> values;
    const size_t rows = lightRowsOf(t, sample(), &values);
    CHECK(values.size() == rows * stored);
  }
  CHECK(lightIndex(Table::kKernels) == -1);
  CHECK(lightColumns(Table::kKernels) == 0);
}

TEST_CASE("each field of a record lands under its schema column's name") {
  const model::StepRecord r = sample();
  TableBlock steps;
  steps.reset(Table::kSteps);
  steps.append(r);
  CHECK(at(steps, "start_ns") == r.start_ns);
  CHECK(at(steps, "end_ns") == r.end_ns);
  CHECK(at(steps, "iter_ns") == r.iter_ns);
  CHECK(at(steps, "flags") == model::kStepInferred);
  CHECK(at(steps, "forward_ns") == r.phase(model::PhaseColumn::kForward));
  CHECK(at(steps, "compute_ns") == r.phase(model::PhaseColumn::kCompute));
  CHECK(at(steps, "launch_gap_ns") == r.phase(model::PhaseColumn::kLaunchGap));
  CHECK(at(steps, "comm_transfer_ns") == 700);

  TableBlock events;
  events.reset(Table::kEvents);
  events.append(r);
  REQUIRE(events.rows == 2);
  CHECK(events.row_counts == std::vector<int64_t>{2});
  CHECK(at(events, "kind", 0) == static_cast<int64_t>(model::EventKind::kMarker));
  CHECK(at(events, "ts_ns", 1) == r.start_ns + 2);
  CHECK(at(events, "value", 1) == -1);  // UINT64_MAX, bit-cast
  CHECK(at(events, "name_id", 0) == 42);
}
