// Value encodings of the `meta` column family (docs/format/keys.md#meta): job info,
// topology and dictionary entries. Each value starts with a record version byte (1).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "model/step_record.h"
#include "storage/store.h"

namespace argus::storage {

inline constexpr uint8_t kMetaRecordVersion = 1;

std::string encodeJobInfo(const JobInfo& info);
Status decodeJobInfo(std::string_view in, JobInfo* out);

std::string encodeTopology(const model::RankTopology& t);
Status decodeTopology(std::string_view in, model::RankTopology* out);

std::string encodeKernelDict(const model::KernelDictEntry& e);  // the signature is in the key
Status decodeKernelDict(std::string_view in, model::KernelDictEntry* out);
std::string encodeStackDict(const model::StackDictEntry& e);
Status decodeStackDict(std::string_view in, model::StackDictEntry* out);
std::string encodeStringDict(const model::StringDictEntry& e);
Status decodeStringDict(std::string_view in, model::StringDictEntry* out);

// A fixed big-endian u32 (format version, block steps, next job id).
std::string encodeU32(uint32_t v);
Status decodeU32(std::string_view in, uint32_t* out);

// Text form of any meta value for `argus dump`.
std::string describeMetaValue(std::string_view key, std::string_view value);

}  // namespace argus::storage
