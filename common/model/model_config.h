#ifndef FANYI_COMMON_MODEL_MODEL_CONFIG_H_
#define FANYI_COMMON_MODEL_MODEL_CONFIG_H_

#include <cstdint>
#include <nlohmann/json.hpp>

namespace fanyi {

// Hyper-parameters of the Transformer encoder-decoder. Validated once by
// Validate(); layers read the fields and never look options up by string.
struct ModelConfig {
  int64_t source_vocab_size = 0;  // Set from the source vocabulary.
  int64_t target_vocab_size = 0;  // Set from the target vocabulary.
  int64_t encoder_layers = 3;     // Encoder blocks.
  int64_t decoder_layers = 3;     // Decoder blocks.
  int64_t d_model = 128;          // Width of every residual stream.
  int64_t d_ff = 512;             // Inner width of the feed-forward blocks.
  int64_t heads = 4;              // Attention heads; must divide d_model.
  double dropout = 0.1;           // Dropout on sublayer outputs and attention.
  int64_t max_positions = 512;    // Longest sequence the position table holds.
  double layer_norm_epsilon = 1e-6;   // Added to the variance in LayerNorm.
  bool tie_target_embeddings = true;  // Generator shares the target embedding.

  // Throws std::invalid_argument naming the first field out of range.
  void Validate() const;
};

// JSON round trip of ModelConfig; FromJson throws std::invalid_argument naming
// a missing or mistyped field.
nlohmann::json ModelConfigToJson(const ModelConfig& config);
ModelConfig ModelConfigFromJson(const nlohmann::json& json);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_MODEL_CONFIG_H_
