#include "common/model_config.h"

#include <stdexcept>
#include <string>

namespace fanyi {
namespace {

void Require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("model config: " + message);
}

template <typename T>
T Field(const nlohmann::json& json, const char* name) {
  if (!json.contains(name)) {
    throw std::invalid_argument(std::string("model config: missing field '") +
                                name + "'");
  }
  try {
    return json.at(name).get<T>();
  } catch (const nlohmann::json::exception& error) {
    throw std::invalid_argument(std::string("model config: field '") + name +
                                "' has the wrong type: " + error.what());
  }
}

}  // namespace

void ModelConfig::Validate() const {
  Require(source_vocab_size > 4, "source_vocab_size must be above 4");
  Require(target_vocab_size > 4, "target_vocab_size must be above 4");
  Require(encoder_layers >= 1, "encoder_layers must be at least 1");
  Require(decoder_layers >= 1, "decoder_layers must be at least 1");
  Require(d_model >= 2 && d_model % 2 == 0, "d_model must be even and >= 2");
  Require(d_ff >= 1, "d_ff must be at least 1");
  Require(heads >= 1 && d_model % heads == 0,
          "heads must divide d_model (d_model " + std::to_string(d_model) +
              ", heads " + std::to_string(heads) + ")");
  Require(dropout >= 0.0 && dropout < 1.0, "dropout must be in [0, 1)");
  Require(max_positions >= 2, "max_positions must be at least 2");
  Require(layer_norm_epsilon > 0.0, "layer_norm_epsilon must be positive");
}

nlohmann::json ModelConfigToJson(const ModelConfig& config) {
  return {
      {"source_vocab_size", config.source_vocab_size},
      {"target_vocab_size", config.target_vocab_size},
      {"encoder_layers", config.encoder_layers},
      {"decoder_layers", config.decoder_layers},
      {"d_model", config.d_model},
      {"d_ff", config.d_ff},
      {"heads", config.heads},
      {"dropout", config.dropout},
      {"max_positions", config.max_positions},
      {"layer_norm_epsilon", config.layer_norm_epsilon},
      {"tie_target_embeddings", config.tie_target_embeddings},
  };
}

ModelConfig ModelConfigFromJson(const nlohmann::json& json) {
  if (!json.is_object()) {
    throw std::invalid_argument("model config: expected a JSON object");
  }
  ModelConfig config;
  config.source_vocab_size = Field<int64_t>(json, "source_vocab_size");
  config.target_vocab_size = Field<int64_t>(json, "target_vocab_size");
  config.encoder_layers = Field<int64_t>(json, "encoder_layers");
  config.decoder_layers = Field<int64_t>(json, "decoder_layers");
  config.d_model = Field<int64_t>(json, "d_model");
  config.d_ff = Field<int64_t>(json, "d_ff");
  config.heads = Field<int64_t>(json, "heads");
  config.dropout = Field<double>(json, "dropout");
  config.max_positions = Field<int64_t>(json, "max_positions");
  config.layer_norm_epsilon = Field<double>(json, "layer_norm_epsilon");
  config.tie_target_embeddings = Field<bool>(json, "tie_target_embeddings");
  config.Validate();
  return config;
}

}  // namespace fanyi
