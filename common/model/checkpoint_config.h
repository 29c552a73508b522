#ifndef FANYI_COMMON_MODEL_CHECKPOINT_CONFIG_H_
#define FANYI_COMMON_MODEL_CHECKPOINT_CONFIG_H_

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/model/checkpoint_contents.h"

namespace fanyi {

// A checkpoint directory's config.json: the fields SaveCheckpoint writes, and
// LoadCheckpoint's checks of its format, version and fields.

// The config.json of `checkpoint`: format and version, languages, decoding
// settings, the model config and provenance. The subword models' fields are
// added by the writer of their files.
nlohmann::json CheckpointConfigJson(const Checkpoint& checkpoint);

// Reads the config.json at `path` and checks its format, its format version
// and its string fields model_version, source_language and target_language.
// Throws std::runtime_error naming the file.
nlohmann::json ReadCheckpointConfig(const std::filesystem::path& path);

// A checkpoint with the languages, provenance and decoding settings of
// `config`, which ReadCheckpointConfig read from `config_path`; no model,
// vocabularies or subword models yet. Throws std::runtime_error naming the
// file.
Checkpoint CheckpointFromConfig(const nlohmann::json& config,
                                const std::filesystem::path& config_path);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CHECKPOINT_CONFIG_H_
