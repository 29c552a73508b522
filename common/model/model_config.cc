#include "common/model/model_config.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

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
  const nlohmann::json& value = json.at(name);
  // Integer fields take JSON integers only: converting 2.5 would truncate
  // and converting 1e300 or 2^64-1 would be undefined or wrap.
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!value.is_number_integer()) {
      throw std::invalid_argument(std::string("model config: field '") + name +
                                  "' must be an integer, not " + value.dump());
    }
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() >
            static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      throw std::invalid_argument(std::string("model config: field '") + name +
                                  "' is out of range: " + value.dump());
    }
  }
  try {
    return value.get<T>();
  } catch (const nlohmann::json::exception& error) {
    throw std::invalid_argument(std::string("model config: field '") + name +
                                "' has the wrong type: " + error.what());
  }
}

// An optional field: `fallback` when absent (checkpoints written before it).
template <typename T>
T OptionalField(const nlohmann::json& json, const char* name, T fallback) {
  return json.contains(name) ? Field<T>(json, name) : fallback;
}

}  // namespace

std::string ActivationName(Activation activation) {
  switch (activation) {
    case Activation::kRelu:
      return "relu";
    case Activation::kGelu:
      return "gelu";
    case Activation::kGeluTanh:
      return "gelu_tanh";
    case Activation::kSwish:
      return "swish";
  }
  return "relu";
}

Activation ParseActivation(const std::string& name) {
  for (Activation activation : {Activation::kRelu, Activation::kGelu,
                                Activation::kGeluTanh, Activation::kSwish}) {
    if (ActivationName(activation) == name) return activation;
  }
  throw std::invalid_argument("model config: activation \"" + name +
                              "\" is not relu, gelu, gelu_tanh or swish");
}

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
  Require(!share_embeddings || source_vocab_size == target_vocab_size,
          "share_embeddings needs one vocabulary size for both sides");
  Require(!generator_bias || tie_target_embeddings,
          "generator_bias is for a tied generator (an untied one has a bias)");
  Require(
      alignment_layer >= -decoder_layers && alignment_layer < decoder_layers,
      "alignment_layer must name a decoder layer (from -" +
          std::to_string(decoder_layers) + " to " +
          std::to_string(decoder_layers - 1) + ")");
  Require(alignment_heads >= 0 && alignment_heads <= heads,
          "alignment_heads must be from 0 (all) to heads");
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
      {"pre_norm", config.pre_norm},
      {"activation", ActivationName(config.activation)},
      {"scale_embeddings", config.scale_embeddings},
      {"final_norms", config.final_norms},
      {"embedding_norms", config.embedding_norms},
      {"share_embeddings", config.share_embeddings},
      {"generator_bias", config.generator_bias},
      {"source_eos", config.source_eos},
      {"alignment_layer", config.alignment_layer},
      {"alignment_heads", config.alignment_heads},
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
  config.pre_norm = OptionalField<bool>(json, "pre_norm", true);
  config.activation =
      ParseActivation(OptionalField<std::string>(json, "activation", "relu"));
  config.scale_embeddings = OptionalField<bool>(json, "scale_embeddings", true);
  config.final_norms = OptionalField<bool>(json, "final_norms", true);
  config.embedding_norms = OptionalField<bool>(json, "embedding_norms", false);
  config.share_embeddings =
      OptionalField<bool>(json, "share_embeddings", false);
  config.generator_bias = OptionalField<bool>(json, "generator_bias", false);
  config.source_eos = OptionalField<bool>(json, "source_eos", true);
  config.alignment_layer =
      OptionalField<int64_t>(json, "alignment_layer", int64_t{-1});
  config.alignment_heads =
      OptionalField<int64_t>(json, "alignment_heads", int64_t{1});
  config.Validate();
  return config;
}

}  // namespace fanyi
