// libFuzzer target: the checkpoint's config.json loader on arbitrary bytes.
//
// Two ways in, both on the same input:
//   - the bytes as JSON (when they parse) through ModelConfigFromJson: it
//     returns a config that passes Validate() and survives a
//     ModelConfigToJson round trip, or throws std::invalid_argument;
//   - the bytes as the config.json of a checkpoint directory without
//     vocabularies or weights through LoadCheckpoint: it throws
//     std::runtime_error (it cannot succeed), never anything else, never a
//     crash or undefined behaviour.
#include <c10/core/Device.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "common/model/checkpoint.h"
#include "common/model/model_config.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_files.h"

namespace fanyi::fuzzing {
namespace {

bool SameConfig(const ModelConfig& a, const ModelConfig& b) {
  return ModelConfigToJson(a) == ModelConfigToJson(b);
}

void CheckModelConfigFromJson(const uint8_t* data, size_t size) {
  const nlohmann::json json =
      nlohmann::json::parse(data, data + size, /*cb=*/nullptr,
                            /*allow_exceptions=*/false);
  if (json.is_discarded()) return;
  ModelConfig config;
  try {
    config = ModelConfigFromJson(json);
  } catch (const std::invalid_argument&) {
    return;  // A clean rejection naming the field.
  }
  config.Validate();  // Must not throw: FromJson validated it.
  FuzzCheck(SameConfig(ModelConfigFromJson(ModelConfigToJson(config)), config),
            "ModelConfigToJson/FromJson round trip changed the config");
}

void CheckLoadCheckpoint(const std::string& directory, const uint8_t* data,
                         size_t size) {
  WriteFileOrDie(directory + "/config.json", data, size);
  try {
    LoadCheckpoint(directory, c10::Device(c10::kCPU));
  } catch (const std::runtime_error&) {
    return;
  }
  FuzzCheck(false, "LoadCheckpoint succeeded without vocabularies or weights");
}

}  // namespace
}  // namespace fanyi::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string directory =
      fanyi::fuzzing::MakeScratchDirectory("model-config-fuzzer");
  fanyi::fuzzing::CheckModelConfigFromJson(data, size);
  fanyi::fuzzing::CheckLoadCheckpoint(directory, data, size);
  return 0;
}
