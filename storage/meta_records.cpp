#include "storage/meta_records.h"

#include "base/bytes.h"
#include "storage/keys.h"

namespace argus::storage {
namespace {

Status checkVersion(ByteReader& r) {
  uint8_t v = 0;
  ARGUS_RETURN_IF_ERROR(r.getU8(&v));
  if (v != kMetaRecordVersion) return Status::corruption("meta record version " + std::to_string(v) + " unknown");
  return Status::ok();
}

Status u32(ByteReader& r, uint32_t* out) {
  uint64_t v = 0;
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&v, UINT32_MAX, "u32 field"));
  *out = static_cast<uint32_t>(v);
  return Status::ok();
}

Status done(const ByteReader& r, const char* what) {
  if (!r.atEnd()) return Status::corruption(std::string(what) + ": trailing bytes");
  return Status::ok();
}

}  // namespace

std::string encodeJobInfo(const JobInfo& info) {
  std::string out;
  ByteWriter w(&out);
  w.putU8(kMetaRecordVersion);
  w.putVarint(info.id);
  w.putString(info.name);
  w.putSignedVarint(info.created_ns);
  w.putSignedVarint(info.last_write_ns);
  w.putSignedVarint(info.retention_ns);
  return out;
}

Status decodeJobInfo(std::string_view in, JobInfo* out) {
  ByteReader r(in, "job info");
  ARGUS_RETURN_IF_ERROR(checkVersion(r));
  ARGUS_RETURN_IF_ERROR(u32(r, &out->id));
  std::string_view name;
  ARGUS_RETURN_IF_ERROR(r.getString(&name, 128));
  out->name = std::string(name);
  ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&out->created_ns));
  ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&out->last_write_ns));
  ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&out->retention_ns));
  return done(r, "job info");
}

std::string encodeTopology(const model::RankTopology& t) {
  std::string out;
  ByteWriter w(&out);
  w.putU8(kMetaRecordVersion);
  for (uint32_t v : {t.rank, t.world_size}) w.putVarint(v);
  w.putString(t.host);
  for (uint32_t v : {t.local_rank, t.device, t.tp_rank, t.tp_size, t.pp_rank, t.pp_size, t.dp_rank, t.dp_size, t.cp_rank, t.cp_size,
                     t.ep_rank, t.ep_size}) {
    w.putVarint(v);
  }
  return out;
}

Status decodeTopology(std::string_view in, model::RankTopology* t) {
  ByteReader r(in, "topology");
  ARGUS_RETURN_IF_ERROR(checkVersion(r));
  ARGUS_RETURN_IF_ERROR(u32(r, &t->rank));
  ARGUS_RETURN_IF_ERROR(u32(r, &t->world_size));
  std::string_view host;
  ARGUS_RETURN_IF_ERROR(r.getString(&host, 4096));
  t->host = std::string(host);
  for (uint32_t* f : {&t->local_rank, &t->device, &t->tp_rank, &t->tp_size, &t->pp_rank, &t->pp_size, &t->dp_rank, &t->dp_size, &t->cp_rank,
                      &t->cp_size, &t->ep_rank, &t->ep_size}) {
    ARGUS_RETURN_IF_ERROR(u32(r, f));
  }
  return done(r, "topology");
}

std::string encodeKernelDict(const model::KernelDictEntry& e) {
  std::string out;
  ByteWriter w(&out);
  w.putU8(kMetaRecordVersion);
  w.putString(e.name);
  const auto& g = e.geometry;
  for (uint32_t v : {g.grid_x, g.grid_y, g.grid_z, g.block_x, g.block_y, g.block_z}) w.putVarint(v);
  return out;
}

Status decodeKernelDict(std::string_view in, model::KernelDictEntry* e) {
  ByteReader r(in, "kernel dictionary entry");
  ARGUS_RETURN_IF_ERROR(checkVersion(r));
  std::string_view name;
  ARGUS_RETURN_IF_ERROR(r.getString(&name));
  e->name = std::string(name);
  auto& g = e->geometry;
  for (uint32_t* f : {&g.grid_x, &g.grid_y, &g.grid_z, &g.block_x, &g.block_y, &g.block_z}) ARGUS_RETURN_IF_ERROR(u32(r, f));
  return done(r, "kernel dictionary entry");
}

std::string encodeStackDict(const model::StackDictEntry& e) {
  std::string out;
  ByteWriter w(&out);
  w.putU8(kMetaRecordVersion);
  w.putVarint(e.frames.size());
  for (const auto& f : e.frames) w.putString(f);
  return out;
}

Status decodeStackDict(std::string_view in, model::StackDictEntry* e) {
  ByteReader r(in, "stack dictionary entry");
  ARGUS_RETURN_IF_ERROR(checkVersion(r));
  uint64_t n = 0;
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&n, r.remaining(), "frame count"));
  e->frames.clear();
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view f;
    ARGUS_RETURN_IF_ERROR(r.getString(&f));
    e->frames.emplace_back(f);
  }
  return done(r, "stack dictionary entry");
}

std::string encodeStringDict(const model::StringDictEntry& e) {
  std::string out;
  ByteWriter w(&out);
  w.putU8(kMetaRecordVersion);
  w.putString(e.text);
  return out;
}

Status decodeStringDict(std::string_view in, model::StringDictEntry* e) {
  ByteReader r(in, "string dictionary entry");
  ARGUS_RETURN_IF_ERROR(checkVersion(r));
  std::string_view text;
  ARGUS_RETURN_IF_ERROR(r.getString(&text));
  e->text = std::string(text);
  return done(r, "string dictionary entry");
}

std::string encodeU32(uint32_t v) {
  std::string out;
  ByteWriter(&out).putFixedBE(v, 4);
  return out;
}

Status decodeU32(std::string_view in, uint32_t* out) {
  if (in.size() != 4) return Status::corruption("expected a 4-byte value, found " + std::to_string(in.size()) + " bytes");
  ByteReader r(in);
  uint64_t v = 0;
  ARGUS_RETURN_IF_ERROR(r.getFixedBE(&v, 4));
  *out = static_cast<uint32_t>(v);
  return Status::ok();
}

std::string describeMetaValue(std::string_view key, std::string_view value) {
  auto fail = [&](const Status& s) { return "<" + s.toString() + "> 0x" + hexBytes(value); };
  if (key.empty()) return "0x" + hexBytes(value);
  auto tag = static_cast<MetaTag>(key[0]);
  if (tag == MetaTag::kFormatVersion || tag == MetaTag::kBlockSteps || tag == MetaTag::kNextJobId) {
    uint32_t v = 0;
    Status s = decodeU32(value, &v);
    return s.isOk() ? std::to_string(v) : fail(s);
  }
  if (tag == MetaTag::kJobByName) {
    JobInfo j;
    Status s = decodeJobInfo(value, &j);
    if (!s.isOk()) return fail(s);
    return "id=" + std::to_string(j.id) + " name=" + j.name + " created_ns=" + std::to_string(j.created_ns) +
           " last_write_ns=" + std::to_string(j.last_write_ns) + " retention_ns=" + std::to_string(j.retention_ns);
  }
  if (tag == MetaTag::kJobData && key.size() >= 6) {
    switch (static_cast<JobDataKind>(key[5])) {
      case JobDataKind::kTopology: {
        model::RankTopology t;
        Status s = decodeTopology(value, &t);
        if (!s.isOk()) return fail(s);
        return "rank=" + std::to_string(t.rank) + " world_size=" + std::to_string(t.world_size) + " host=" + t.host +
               " local_rank=" + std::to_string(t.local_rank) + " device=" + std::to_string(t.device) + " tp=" + std::to_string(t.tp_rank) +
               "/" + std::to_string(t.tp_size) + " pp=" + std::to_string(t.pp_rank) + "/" + std::to_string(t.pp_size) +
               " dp=" + std::to_string(t.dp_rank) + "/" + std::to_string(t.dp_size) + " cp=" + std::to_string(t.cp_rank) + "/" +
               std::to_string(t.cp_size) + " ep=" + std::to_string(t.ep_rank) + "/" + std::to_string(t.ep_size);
      }
      case JobDataKind::kKernelDict: {
        model::KernelDictEntry e;
        Status s = decodeKernelDict(value, &e);
        if (!s.isOk()) return fail(s);
        const auto& g = e.geometry;
        return "name=\"" + e.name + "\" grid=" + std::to_string(g.grid_x) + "x" + std::to_string(g.grid_y) + "x" + std::to_string(g.grid_z) +
               " block=" + std::to_string(g.block_x) + "x" + std::to_string(g.block_y) + "x" + std::to_string(g.block_z);
      }
      case JobDataKind::kStackDict: {
        model::StackDictEntry e;
        Status s = decodeStackDict(value, &e);
        if (!s.isOk()) return fail(s);
        std::string out = std::to_string(e.frames.size()) + " frames:";
        for (const auto& f : e.frames) out += " | " + f;
        return out;
      }
      case JobDataKind::kStringDict: {
        model::StringDictEntry e;
        Status s = decodeStringDict(value, &e);
        return s.isOk() ? "\"" + e.text + "\"" : fail(s);
      }
      case JobDataKind::kFinding:
        break;  // the diagnosis's layout (diagnose/finding_record.h): shown as bytes
    }
  }
  return "0x" + hexBytes(value);
}

}  // namespace argus::storage
