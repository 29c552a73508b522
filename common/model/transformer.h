#ifndef FANYI_COMMON_MODEL_TRANSFORMER_H_
#define FANYI_COMMON_MODEL_TRANSFORMER_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

#include "common/model/decoder_state.h"
#include "common/model/inference_kernel.h"
#include "common/model/model_config.h"

namespace fanyi {

class StepGraphs;

// The sinusoidal position table of "Attention Is All You Need":
// PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...).
// Returns [max_positions, d_model].
torch::Tensor SinusoidalPositions(int64_t max_positions, int64_t d_model);

// The Transformer encoder-decoder with its embeddings and generator.
class TransformerImpl : public torch::nn::Module {
 public:
  explicit TransformerImpl(const ModelConfig& config);

  // Teacher-forced logits: source_ids [batch, src_len], target_input
  // [batch, tgt_len] (starting with <s>) -> [batch, tgt_len, target_vocab].
  torch::Tensor forward(const torch::Tensor& source_ids,
                        const torch::Tensor& target_input);

  // Encoder output [batch, src_len, d_model]; padding is masked out.
  torch::Tensor Encode(const torch::Tensor& source_ids,
                       const torch::Tensor& source_mask);

  // Decoder hidden states for a whole target prefix, recomputed from scratch:
  // [batch, tgt_len] -> [batch, tgt_len, d_model].
  torch::Tensor DecodeFull(const torch::Tensor& target_input,
                           const torch::Tensor& memory,
                           const torch::Tensor& source_mask);

  // Starts incremental decoding of `memory` [sources, src_len, d_model]:
  // one row per source, or with `sources` [rows] int64, a row for each entry
  // decoding that source (a beam search group's rows share one; its
  // cross-attention keys and values are computed and kept once).
  DecoderState StartDecoding(const torch::Tensor& memory,
                             const torch::Tensor& source_mask,
                             const torch::Tensor& sources = {});

  // Feeds only the newest token of each row, [batch], and returns the logits
  // of the next one, [batch, target_vocab]. Advances `state`. With `graphs`,
  // the step attends over every cache column (those past its own masked),
  // so that on a CUDA device it can replay from CUDA graphs (StepGraphs;
  // the same logits). A step whose state wants alignments
  // (DecoderState::wants_alignment) leaves them in the state, and runs
  // without graphs.
  torch::Tensor DecodeStep(const torch::Tensor& last_tokens,
                           DecoderState* state, StepGraphs* graphs = nullptr);

  // Installs (or, with nullptr, removes) the kernel that Encode,
  // StartDecoding and DecodeStep run in eval mode without autograd. A kernel
  // may hold a copy of the weights: install one only on a model that will
  // not be trained further.
  // Throws std::logic_error once the weights are released.
  void SetInferenceKernel(std::shared_ptr<const InferenceKernel> kernel);

  // Frees the parameters and buffers once the installed kernel holds its
  // own copy of them (a model loaded to translate: Translator::Load), so
  // that a served model is in memory once. From then on only the kernel's
  // inference runs (Encode, StartDecoding, DecodeStep in eval mode without
  // autograd); anything else throws std::logic_error. Throws
  // std::logic_error without a kernel.
  void ReleaseWeights();
  bool weights_released() const { return weights_released_; }
  // The installed kernel, or nullptr.
  const InferenceKernel* inference_kernel() const {
    return inference_kernel_.get();
  }

  // Logits over the target vocabulary: [..., d_model] -> [..., target_vocab],
  // float32 for a half-precision model, else in the model's type.
  torch::Tensor Generate(const torch::Tensor& hidden);

  const ModelConfig& config() const { return config_; }

 private:
  // Whether Encode, StartDecoding and DecodeStep run the kernel.
  bool UsesKernel() const;
  // Throws std::logic_error when the weights were released: what calls it
  // needs them.
  void RequireWeights() const;

  // DecodeStep's work after the state opened this step's column: `inputs`
  // are the step's tokens, positions, column ([1]), self-attention bias
  // storage, self-attention table, memory rows, source bias and first column
  // in use ([1]): the state's own, or a CUDA graph's copies, whose batch may
  // be padded. It attends to the columns from `first_column` to
  // `end_column`; with `mask_later_columns`, those past the step's column
  // and before the first in use are masked.
  torch::Tensor StepColumns(const std::vector<torch::Tensor>& inputs,
                            DecoderState& state, int64_t first_column,
                            int64_t end_column, bool mask_later_columns);

  // Scaled embeddings plus positions 0..len-1, then `norm` (the side's
  // embedding norm, or null): [batch, len] -> [b, len, d].
  torch::Tensor Embed(torch::nn::Embedding& embedding,
                      torch::nn::LayerNorm& norm, const torch::Tensor& ids);
  // Embeddings of `ids` [batch] at `positions` [batch] (rows may be at
  // different positions) on the target side: [batch, d_model].
  torch::Tensor EmbedStep(const torch::Tensor& ids,
                          const torch::Tensor& positions);

  ModelConfig config_;
  torch::nn::Embedding source_embedding_{nullptr};
  torch::nn::Embedding target_embedding_{nullptr};       // Maybe the source's.
  torch::nn::LayerNorm source_embedding_norm_{nullptr};  // Null unless
  torch::nn::LayerNorm target_embedding_norm_{nullptr};  // embedding_norms.
  torch::nn::ModuleList encoder_layers_{nullptr};
  torch::nn::ModuleList decoder_layers_{nullptr};
  torch::nn::LayerNorm encoder_norm_{nullptr};  // Null unless final_norms.
  torch::nn::LayerNorm decoder_norm_{nullptr};
  torch::nn::Linear generator_{nullptr};  // Null when tied to the embedding.
  torch::Tensor generator_bias_;          // A tied generator's, if any.
  torch::nn::Dropout embedding_dropout_{nullptr};
  torch::Tensor positions_;  // [max_positions, d_model] buffer.
  std::shared_ptr<const InferenceKernel> inference_kernel_;
  bool weights_released_ = false;
};
TORCH_MODULE(Transformer);

// Boolean padding mask [batch, 1, 1, len] of `ids`: true on non-<pad> tokens.
torch::Tensor PaddingMask(const torch::Tensor& ids);

// Boolean causal mask [1, 1, len, len]: position i sees positions <= i.
torch::Tensor CausalMask(int64_t length, const torch::Device& device);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_TRANSFORMER_H_
