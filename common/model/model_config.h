#ifndef FANYI_COMMON_MODEL_MODEL_CONFIG_H_
#define FANYI_COMMON_MODEL_MODEL_CONFIG_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace fanyi {

// The feed-forward blocks' activation.
enum class Activation { kRelu, kGelu, kGeluTanh, kSwish };

// "relu", "gelu", "gelu_tanh", "swish"; ParseActivation throws
// std::invalid_argument for another name.
std::string ActivationName(Activation activation);
Activation ParseActivation(const std::string& name);

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
  // Variants that models from elsewhere use (CTranslate2's TransformerSpec
  // options); fanyi's trainer keeps the defaults.
  bool pre_norm = true;  // x + f(norm(x)); false: norm(x + f(x)) (post-norm).
  Activation activation = Activation::kRelu;
  bool scale_embeddings = true;   // Embeddings times sqrt(d_model).
  bool final_norms = true;        // A layer norm after each stack.
  bool embedding_norms = false;   // A layer norm after embeddings + positions.
  bool share_embeddings = false;  // The target side reads the source's.
  bool generator_bias = false;    // A tied generator's own bias.
  // Whether every source ends with </s>, as fanyi's trainer and Marian
  // frame them; OpenNMT-py's models read their sources as they are.
  bool source_eos = true;
  // Which cross-attention gives each target token's alignment to the source
  // (the source token it attends to most): decoder layer alignment_layer
  // (negative counts from the last), its first alignment_heads heads
  // averaged (0: all). CTranslate2's defaults, which its converters keep
  // for models trained without alignments.
  int64_t alignment_layer = -1;
  int64_t alignment_heads = 1;

  // The decoder layer alignments come from, counted from 0.
  int64_t AlignmentLayer() const {
    return alignment_layer < 0 ? decoder_layers + alignment_layer
                               : alignment_layer;
  }
  // The heads averaged for alignments: the first AlignmentHeads().
  int64_t AlignmentHeads() const {
    return alignment_heads == 0 ? heads : alignment_heads;
  }

  // The most tokens a source may have: the position table's rows, less
  // one for the </s> appended when sources end with it.
  int64_t MaxSourceTokens() const {
    return max_positions - (source_eos ? 1 : 0);
  }

  // Throws std::invalid_argument naming the first field out of range.
  void Validate() const;
};

// JSON round trip of ModelConfig; FromJson throws std::invalid_argument naming
// a missing or mistyped field.
nlohmann::json ModelConfigToJson(const ModelConfig& config);
ModelConfig ModelConfigFromJson(const nlohmann::json& json);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_MODEL_CONFIG_H_
