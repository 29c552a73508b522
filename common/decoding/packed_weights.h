#ifndef FANYI_COMMON_DECODING_PACKED_WEIGHTS_H_
#define FANYI_COMMON_DECODING_PACKED_WEIGHTS_H_

#include <cstdint>
#include <vector>

#include "common/decoding/cpu_isa.h"
#include "common/decoding/packed_linear.h"
#include "common/model/transformer.h"

namespace fanyi {

// A Transformer's weights copied out of the model for PackedTransformer's
// passes: every matrix packed once (PackedLinear), the query projections
// pre-scaled by 1/√d_k and joined with their keys' and values', norms and
// embeddings as plain floats.
struct PackedWeights {
  // Layer norm's scale and shift.
  struct Norm {
    std::vector<float> scale;
    std::vector<float> shift;
  };
  struct EncoderLayer {
    Norm attention_norm;
    PackedLinear projections;  // [3 * d_model, d_model], query scaled.
    PackedLinear output;
    Norm feed_forward_norm;
    PackedLinear feed_forward_inner;
    PackedLinear feed_forward_outer;
  };
  struct Layer {
    Norm self_attention_norm;
    PackedLinear self_projections;  // [3 * d_model, d_model]: query (scaled
                                    // by 1/√d_k), key and value.
    PackedLinear self_output;
    Norm cross_attention_norm;
    PackedLinear cross_query;        // Scaled by 1/√d_k.
    PackedLinear cross_keys_values;  // [2 * d_model, d_model]
    PackedLinear cross_output;
    Norm feed_forward_norm;
    PackedLinear feed_forward_inner;
    PackedLinear feed_forward_outer;
  };

  // Copies and packs `model`'s parameters (float32 on the CPU) in
  // `compute_type`'s arithmetic with `isa`'s PackedLinear variant; throws
  // std::invalid_argument when the model lacks one.
  PackedWeights(TransformerImpl& model, CpuIsa isa, ComputeType compute_type);

  int64_t d_model = 0;
  int64_t heads = 0;
  int64_t d_k = 0;
  int64_t d_ff = 0;
  int64_t source_vocabulary = 0;
  int64_t vocabulary = 0;
  int64_t max_positions = 0;
  int64_t alignment_layer = 0;  // ModelConfig::AlignmentLayer()
  int64_t alignment_heads = 1;  // ModelConfig::AlignmentHeads()
  float embedding_scale = 1;    // √d_model
  float epsilon = 0;            // Of every layer norm.
  // [source_vocab, d_model]; empty when the model shares one embedding
  // matrix, which embedding then holds once.
  std::vector<float> source_embedding;
  std::vector<EncoderLayer> encoder_layers;
  Norm encoder_norm;
  std::vector<float> embedding;  // [target_vocab, d_model]
  std::vector<float> positions;  // [max_positions, d_model]
  std::vector<Layer> layers;
  Norm final_norm;
  PackedLinear generator;  // [target_vocab, d_model]
};

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_PACKED_WEIGHTS_H_
