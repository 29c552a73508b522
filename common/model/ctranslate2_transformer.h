#ifndef FANYI_COMMON_MODEL_CTRANSLATE2_TRANSFORMER_H_
#define FANYI_COMMON_MODEL_CTRANSLATE2_TRANSFORMER_H_

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/model/ctranslate2_file.h"

namespace fanyi {

// The feed-forward activations of CTranslate2's specs, numbered as they
// store them.
enum class Ct2Activation : int64_t {
  kRelu = 0,
  kGeluTanh = 1,
  kSwish = 2,
  kGelu = 3,
};

// One side of a CTranslate2 Transformer, as its model.bin says.
struct Ct2StackOptions {
  int64_t layers = 0;
  int64_t heads = 0;
  bool pre_norm = true;
  Ct2Activation activation = Ct2Activation::kRelu;
  bool scale_embeddings = true;      // Embeddings times sqrt(d_model).
  bool final_norm = true;            // A layer norm after the last layer.
  bool layernorm_embedding = false;  // A layer norm after the embeddings.
  // Rows of the stored position table; 0: CTranslate2's own sinusoids
  // (every sine, then every cosine).
  int64_t stored_positions = 0;
  // The decoder's first step reads a zero embedding, whatever its token
  // (Marian's models).
  bool start_from_zero_embedding = false;
  // The decoder's alignment heads (ModelConfig::alignment_layer and
  // alignment_heads).
  int64_t alignment_layer = -1;
  int64_t alignment_heads = 1;
};

// What fanyi needs of a CTranslate2 encoder-decoder Transformer
// (TransformerSpec: OpenNMT-py and Argos, Marian and OPUS-MT, M2M-100 and
// NLLB), read from its model.bin and config.json and checked.
struct Ct2TransformerOptions {
  Ct2StackOptions encoder;
  Ct2StackOptions decoder;
  int64_t d_model = 0;
  int64_t d_ff = 0;
  int64_t source_vocabulary_size = 0;
  int64_t target_vocabulary_size = 0;
  bool shared_embeddings = false;  // Decoder's embeddings are the encoder's.
  bool tied_projection = false;    // Output projection = decoder embeddings.
  bool projection_bias = false;
  double layer_norm_epsilon = 1e-5;
  // config.json's tokens, found by their strings in the vocabularies.
  std::string unk_token = "<unk>";
  std::string bos_token = "<s>";
  std::string eos_token = "</s>";
  // The token each target starts from; nullopt: the caller's (a language
  // token, as NLLB's target prefix).
  std::optional<std::string> decoder_start_token = "<s>";
  bool add_source_bos = false;
  bool add_source_eos = false;
};

// The most bytes of config.json that fanyi reads.
inline constexpr int64_t kMaxCt2ConfigBytes = int64_t{1} << 20;

// Reads a TransformerSpec's options from `model` and `config` (config.json's
// text; empty when the directory has none: older models keep their settings
// as variables). Throws std::runtime_error, naming the file and the option,
// for any spec, option or variable fanyi cannot serve (relative positions,
// rotary or ALiBi positions, multi-query attention, gated or RMS-normed
// layers, several source embeddings, decoder-only models, ...), and for
// shapes that do not agree.
Ct2TransformerOptions ReadCt2TransformerOptions(const Ct2ModelFile& model,
                                                const std::string& config_json,
                                                const std::string& config_name);

// The position table CTranslate2 computes for a model that stores none,
// float32 as it computes it: row r is position r's, from time r + 1, every
// sine and then every cosine of d_model / 2 frequencies spaced by
// log(10000) / (d_model / 2 - 1). [rows, d_model]; throws
// std::invalid_argument for an odd d_model below 4 or negative rows.
torch::Tensor Ct2SinusoidalPositions(int64_t rows, int64_t d_model);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CTRANSLATE2_TRANSFORMER_H_
