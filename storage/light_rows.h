// Light rows: a record's rows of the tables that hold few per step (steps: one; events: a
// handful), as the values of their stored columns (ids 3, 4, ... in id order), row-major.
// Head entries (version 2) carry them beside each record so that a scan of these tables
// over unsealed steps decodes no record (docs/format/keys.md, "head"); sealing appends the
// same rows (TableBlock::append): one mapping from StepRecord to these tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/status.h"
#include "model/step_record.h"
#include "storage/column_batch.h"

namespace argus::storage {

inline constexpr Table kLightTables[] = {Table::kSteps, Table::kEvents};
inline constexpr size_t kLightTableCount = std::size(kLightTables);

// t's index in kLightTables, or -1 for a table whose rows head entries do not carry.
int lightIndex(Table t);
// The stored columns of a light row of t: 15 (steps), 4 (events).
size_t lightColumns(Table t);
// Appends rec's rows of light table t to *values, row-major; returns how many rows.
size_t lightRowsOf(Table t, const model::StepRecord& rec, std::vector<int64_t>* values);

// One light table's section of a head record:
//   varint columns | varint rows | rows x columns zigzag varints (u64 columns bit-cast)
struct LightSection {
  uint64_t columns = 0, rows = 0;
  std::string_view values;  // rows x columns varints
  // Appends the first `keep` columns of each row to *out, past the rest (a later build's).
  // Corruption for an overlong varint. REQUIRES: read by getLightPart, keep <= columns.
  Status read(size_t keep, std::vector<int64_t>* out) const;
};

// A record's light part: varint length | a section per light table, in kLightTables order.
// The length lets a reader skip the part whole and a later build append sections (read past).
void putLightPart(const model::StepRecord& rec, std::string* out);
// Reads the light part's sections into out[kLightTableCount]. Corruption when the part is cut
// short, when a section overruns it, holds fewer columns than this build reads, or (steps)
// other than one row.
Status getLightPart(ByteReader& r, LightSection* out);

}  // namespace argus::storage
