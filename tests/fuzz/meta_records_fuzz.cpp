// Fuzzes the `meta` value decoders of storage/meta_records.h, and decodeStandalone (a
// standalone StepRecord encoding, as dumps and seeds use it; head entries are fuzzed by
// dump_fuzz).
//
// Input: one selector byte (taken modulo 7), then the value:
//   0 JobInfo, 1 RankTopology, 2 KernelDictEntry, 3 StackDictEntry, 4 StringDictEntry,
//   5 u32, 6 standalone StepRecord
// Invariant: an accepted value re-encodes and decodes to the same fields.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/step_codec.h"
#include "storage/meta_records.h"
#include "tests/fuzz/fuzz_util.h"

using namespace argus::storage;
namespace model = argus::model;

namespace {

template <typename T, typename Encode, typename Decode>
void roundTrip(std::string_view in, Encode encode, Decode decode) {
  T value;
  if (!decode(in, &value).isOk()) return;
  std::string bytes = encode(value);
  T back;
  FUZZ_CHECK(decode(bytes, &back).isOk());
  FUZZ_CHECK(back == value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view in = argus::fuzz::asView(data + 1, size - 1);
  switch (data[0] % 7) {
    case 0: {
      JobInfo info;
      if (!decodeJobInfo(in, &info).isOk()) return 0;
      JobInfo back;
      FUZZ_CHECK(decodeJobInfo(encodeJobInfo(info), &back).isOk());
      FUZZ_CHECK(back.id == info.id && back.name == info.name && back.created_ns == info.created_ns &&
                 back.last_write_ns == info.last_write_ns && back.retention_ns == info.retention_ns);
      break;
    }
    case 1:
      roundTrip<model::RankTopology>(in, [](const auto& v) { return encodeTopology(v); },
                                     [](std::string_view s, auto* v) { return decodeTopology(s, v); });
      break;
    case 2:
      // The signature lives in the key, not the value: it decodes as whatever was there.
      roundTrip<model::KernelDictEntry>(in, [](const auto& v) { return encodeKernelDict(v); },
                                        [](std::string_view s, auto* v) { return decodeKernelDict(s, v); });
      break;
    case 3:
      roundTrip<model::StackDictEntry>(in, [](const auto& v) { return encodeStackDict(v); },
                                       [](std::string_view s, auto* v) { return decodeStackDict(s, v); });
      break;
    case 4:
      roundTrip<model::StringDictEntry>(in, [](const auto& v) { return encodeStringDict(v); },
                                        [](std::string_view s, auto* v) { return decodeStringDict(s, v); });
      break;
    case 5:
      roundTrip<uint32_t>(in, [](uint32_t v) { return encodeU32(v); }, [](std::string_view s, uint32_t* v) { return decodeU32(s, v); });
      break;
    case 6: {
      model::StepRecord rec;
      if (!model::decodeStandalone(in, &rec).isOk()) return 0;
      model::StepRecord canonical = rec;
      canonical.canonicalize();
      if (!(canonical == rec)) return 0;  // the encoder REQUIRES canonical records
      model::StepRecord back;
      FUZZ_CHECK(model::decodeStandalone(model::encodeStandalone(rec), &back).isOk());
      FUZZ_CHECK(back == rec);
      break;
    }
  }
  return 0;
}
