#include "storage/light_rows.h"

#include "storage/varint_cursor.h"

namespace argus::storage {
namespace {

int64_t bits(uint64_t v) { return static_cast<int64_t>(v); }

}  // namespace

int lightIndex(Table t) {
  for (size_t i = 0; i < kLightTableCount; ++i) {
    if (kLightTables[i] == t) return static_cast<int>(i);
  }
  return -1;
}

size_t lightColumns(Table t) { return t == Table::kSteps ? 15 : t == Table::kEvents ? 4 : 0; }

size_t lightRowsOf(Table t, const model::StepRecord& rec, std::vector<int64_t>* values) {
  if (t == Table::kSteps) {
    static_assert(model::kPhaseColumnCount == 10, "the phase columns are ids 7..16");
    values->insert(values->end(), {rec.start_ns, rec.end_ns, rec.iter_ns, bits(rec.flags)});
    values->insert(values->end(), rec.phase_ns.begin(), rec.phase_ns.end());
    values->push_back(model::commTransferNs(rec.collectives));
    return 1;
  }
  for (const model::EventRecord& e : rec.events) values->insert(values->end(), {static_cast<int64_t>(e.kind), e.ts_ns, bits(e.value), bits(e.name_id)});
  return rec.events.size();
}

Status LightSection::read(size_t keep, std::vector<int64_t>* out) const {
  VarintCursor in(values);
  for (uint64_t row = 0; row < rows; ++row) {
    for (uint64_t c = 0; c < columns; ++c) {
      uint64_t v = 0;
      if (!in.next(&v)) return Status::corruption("light rows: a varint overflows 64 bits");
      if (c < keep) out->push_back(zigzagDecode(v));
    }
  }
  return Status::ok();
}

void putLightPart(const model::StepRecord& rec, std::string* out) {
  thread_local std::vector<int64_t> values;
  thread_local std::string part;
  part.clear();
  ByteWriter w(&part);
  for (Table t : kLightTables) {
    values.clear();
    const size_t rows = lightRowsOf(t, rec, &values);
    w.putVarint(lightColumns(t));
    w.putVarint(rows);
    for (int64_t v : values) w.putSignedVarint(v);
  }
  ByteWriter(out).putString(part);
}

namespace {

Status getLightSection(ByteReader& r, Table t, LightSection* out) {
  const char* name = tableName(t);
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&out->columns, 255, "light columns"));  // column ids are a byte
  // Every value takes a byte at least: a count past the bytes left is damage, not a loop.
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&out->rows, out->columns == 0 ? 0 : r.remaining() / out->columns, "light rows"));
  if (out->columns < lightColumns(t)) {
    return Status::corruption(std::string(name) + " rows of " + std::to_string(out->columns) + " columns (this build reads " +
                              std::to_string(lightColumns(t)) + ")");
  }
  if (t == Table::kSteps && out->rows != 1) return Status::corruption(std::to_string(out->rows) + " steps rows for one record");
  // Finds the end: the byte that ends the last varint (read() checks each varint).
  const std::string_view rest = r.rest();
  size_t len = 0;
  for (uint64_t n = out->rows * out->columns; n > 0; ++len) {
    if (len == rest.size()) return Status::corruption(std::string(name) + " light rows cut short");
    n -= static_cast<uint8_t>(rest[len]) < 0x80;
  }
  ARGUS_RETURN_IF_ERROR(r.getBytes(len, &out->values));
  return Status::ok();
}

}  // namespace

Status getLightPart(ByteReader& r, LightSection* out) {
  std::string_view part;
  ARGUS_RETURN_IF_ERROR(r.getString(&part, r.remaining()));
  ByteReader sections(part, "light part");
  for (size_t i = 0; i < kLightTableCount; ++i) ARGUS_RETURN_IF_ERROR(getLightSection(sections, kLightTables[i], &out[i]));
  return Status::ok();  // what follows in the part is a later build's sections
}

}  // namespace argus::storage
