#include "model/step_chain.h"

#include "model/step_codec_format.h"

namespace argus::model {

bool isKeyframe(std::string_view encoded) {
  return !encoded.empty() && (static_cast<uint8_t>(encoded[0]) & step_format::kFlagKeyframe) != 0;
}

}  // namespace argus::model
