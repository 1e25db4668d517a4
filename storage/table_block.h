// TableBlock: one table's rows of one (rank, attempt) over one block of steps, column-wise.
// The in-memory form between StepRecords (decoded head entries) and chunks: sealing appends records to
// blocks and encodes them; scans and re-seals decode chunks back into blocks.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "base/status.h"
#include "model/step_record.h"
#include "storage/column_batch.h"
#include "storage/column_codec.h"
#include "storage/light_rows.h"

namespace argus::storage {

inline constexpr Table kAllTables[] = {Table::kSteps, Table::kKernels, Table::kCollectives, Table::kStacks, Table::kEvents};
inline constexpr int kTableCount = 5;
inline int tableIndex(Table t) { return static_cast<int>(t) - 1; }

// Columns 0-2 (rank, step, attempt) live in keys and are never stored as chunks.
inline constexpr uint8_t kFirstStoredColumnId = 3;

// Nested tables have zero or more rows per step and store a row-count column per block.
inline bool isNestedTable(Table t) { return t != Table::kSteps; }

// Column ids whose values form a row's group key (grouped codecs code a row against the
// previous row with the same key). Group-key columns themselves use ungrouped codecs.
std::span<const uint8_t> groupKeyColumns(Table t);

// Columns other codecs may predict from (RowContext::counts / hists); kNoColumn if none.
inline constexpr uint8_t kNoColumn = 0xff;
inline uint8_t countColumnOf(Table t) { return t == Table::kKernels ? 5 : kNoColumn; }
inline uint8_t histColumnOf(Table t) { return t == Table::kKernels ? 7 : kNoColumn; }

// A column that usually equals the sum of other columns of its row (kSumResidual codes the
// difference). Terms never have predictors themselves, so decoding cannot cycle.
struct SumPredictor {
  uint8_t column;
  uint8_t terms[3];
  uint8_t nterms;
  // Whether writers still code the column against it. A residual chunk costs a read of
  // every term: for a column queried on its own that is several chunks for one.
  bool written;
};
// REQUIRES nothing; returns null when the column has no predictor.
const SumPredictor* sumPredictorOf(Table t, uint8_t column);

struct TableBlock {
  Table table = Table::kSteps;
  std::vector<int64_t> steps;       // steps present, ascending (stored as column _steps)
  std::vector<int64_t> row_counts;  // rows per present step; nested tables only (_rows)
  std::vector<Column> columns;      // indexed by column id; ids < kFirstStoredColumnId unused
  size_t rows = 0;
  // Empties the block and shapes `columns` after the table's schema.
  void reset(Table t);
  // Decoding (ChunkReader::readBlock): beginDecode, markDecoded for each column it fills,
  // endDecode. The steps, row counts and every column the previous decodes filled keep
  // their storage at its size, because each decoder rewrites every row it is asked for;
  // endDecode empties those this decode did not fill, so that afterwards the filled columns
  // hold values and every other column is empty. Growing a cleared vector back zero-filled
  // every row first: a kernels block's count and group-key columns, decoded for the codecs
  // of the column asked for, cost 6% of a kernel-histogram scan's instructions that way.
  void beginDecode(Table t);
  void markDecoded(uint8_t id) { decoded_.add(id); }
  void endDecode();
  // Appends rec's rows. REQUIRES: rec.step greater than every step already appended.
  void append(const model::StepRecord& rec);
  // Same, but moves the kernel histograms out of rec (sealing owns its decoded records).
  void append(model::StepRecord&& rec);
  // n rows of a light table (light_rows.h), row-major: what append(rec) adds there.
  void appendLightRows(uint64_t step, size_t n, std::span<const int64_t> values);
  // Dense group ids of rows (first-appearance order) from the group-key columns.
  // REQUIRES: the group-key columns are filled for all rows.
  RowContext groups() const;
  // The prediction of `p` for every row (wrapping sums). REQUIRES: its terms are filled.
  void predict(const SumPredictor& p, std::vector<int64_t>* out) const;
  // Index of the first row of each present step (size steps.size() + 1).
  std::vector<size_t> rowOffsets() const;
  // The same into *out, reusing its buffer (the scan computes one per block).
  void rowOffsets(std::vector<size_t>* out) const;
  // [first, last): the indexes in `steps` of the steps in [from, to). REQUIRES: steps ascend.
  std::pair<size_t, size_t> stepsIn(uint64_t from, uint64_t to) const;

 private:
  // A set of column ids (all < 256).
  struct ColumnSet {
    uint64_t bits[4] = {};
    void add(uint8_t id) { bits[id / 64] |= uint64_t{1} << (id % 64); }
  };
  // Sets `table` (and the columns' names and types when it changes) and rows = 0.
  void shapeFor(Table t);

  ColumnSet decoded_;       // filled by the decode under way (or the last one)
  ColumnSet kept_;          // filled before it: endDecode empties those not decoded again
  bool filled_all_ = true;  // after reset / append: any column may hold values
  std::vector<int64_t> light_scratch_;  // append's light rows, capacity reused
};

// Rebuilds the records of one (rank, attempt) from the blocks of all five tables (indexed
// by tableIndex), every column filled. Corruption when the tables disagree on the steps
// present or a value does not fit its field.
Status recordsFromBlocks(uint32_t rank, uint16_t attempt, const TableBlock (&blocks)[kTableCount],
                         std::vector<model::StepRecord>* out);

}  // namespace argus::storage
