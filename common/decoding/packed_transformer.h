#ifndef FANYI_COMMON_DECODING_PACKED_TRANSFORMER_H_
#define FANYI_COMMON_DECODING_PACKED_TRANSFORMER_H_

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/decoding/cpu_isa.h"
#include "common/decoding/packed_linear.h"
#include "common/decoding/packed_weights.h"
#include "common/model/decoder_state.h"
#include "common/model/inference_kernel.h"
#include "common/model/transformer.h"

namespace fanyi {

// The Transformer's inference passes on the CPU, written on raw float
// buffers: the encoder, the cross-attention keys and values of a source, and
// the decoder's incremental step. Every weight matrix is packed once
// (PackedLinear); bias, ReLU and residual adds happen in the products'
// output pass; attention reads the key/value cache through DecoderState's
// tables in place; every intermediate lives in a per-thread workspace. A
// step calls no LibTorch operator except the one allocation of the logits
// it returns (and DecoderState::AddColumn's, when the cache grows).
//
// LibTorch's step (TransformerImpl::DecodeStep without a kernel) runs about
// 170 operators per step, and admitting a sentence (its encoder pass and
// cross-attention projections) about 140 more; at batch 1 their dispatch
// cost more than the arithmetic. The weights are copied when the kernel is
// built, so it serves a model that no longer changes: one loaded to
// translate, not one being trained. Thread-safe: decode workers may share
// one.
class PackedTransformer : public InferenceKernel {
 public:
  // Packs `model` (float32 parameters on the CPU, eval mode); throws
  // std::invalid_argument otherwise. `isa` picks the PackedLinear variant,
  // `compute_type` the arithmetic of every linear layer (embeddings, layer
  // norms and attention stay float32).
  explicit PackedTransformer(TransformerImpl& model,
                             CpuIsa isa = DetectedCpuIsa(),
                             ComputeType compute_type = ComputeType::kFloat32);

  // Whether it computes a model of `config`'s layers: pre-norm, ReLU,
  // scaled embeddings, final norms and no embedding norms (fanyi's own, and
  // OpenNMT-py's as Argos ships them); shared embeddings and a tied
  // generator's bias are fine.
  static bool Computes(const ModelConfig& config);

  // TransformerImpl::Encode: `source_ids` [batch, src_len] (int64, CPU) and
  // `source_mask` [batch, 1, 1, src_len] (bool) -> [batch, src_len,
  // d_model]. Throws std::out_of_range for an id outside the vocabulary or
  // a source longer than the position table.
  torch::Tensor Encode(const torch::Tensor& source_ids,
                       const torch::Tensor& source_mask) const override;

  // Each decoder layer's cross-attention keys and values of `memory`
  // [sources, src_len, d_model], each [sources, heads, src_len, d_k].
  std::vector<std::pair<torch::Tensor, torch::Tensor>> MemoryKeysValues(
      const torch::Tensor& memory) const override;

  // TransformerImpl::DecodeStep: feeds `last_tokens` [batch] (int64, CPU)
  // and returns the logits of the next token, [batch, target_vocab];
  // advances `state`. Throws std::out_of_range for a token outside the
  // vocabulary or a row past the position table.
  torch::Tensor Step(const torch::Tensor& last_tokens,
                     DecoderState* state) const override;

 private:
  using Norm = PackedWeights::Norm;
  using EncoderLayer = PackedWeights::EncoderLayer;
  using Layer = PackedWeights::Layer;

  // Layer norm of `rows` rows of `x` into `out`.
  void Normalize(const Norm& norm, const float* x, int64_t rows,
                 float* out) const;
  // The feed-forward sublayer: x += outer(relu(inner(norm(x)))) over `rows`
  // rows, with `normed` [rows, d_model] and `hidden` [rows, d_ff] as scratch.
  void AddFeedForward(const Norm& norm, const PackedLinear& inner,
                      const PackedLinear& outer, int64_t rows, float* x,
                      float* normed, float* hidden) const;

  PackedWeights weights_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_PACKED_TRANSFORMER_H_
