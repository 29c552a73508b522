#ifndef FANYI_COMMON_MULTI_HEAD_ATTENTION_H_
#define FANYI_COMMON_MULTI_HEAD_ATTENTION_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <utility>

namespace fanyi {

// Output and weights of scaled dot-product attention.
struct AttentionResult {
  torch::Tensor output;   // [batch, heads, q_len, d_k]
  torch::Tensor weights;  // [batch, heads, q_len, kv_len]; rows sum to 1.
};

// softmax(q·kᵀ/√d_k)·v where `mask` (bool, broadcastable to
// [batch, heads, q_len, kv_len]) is true where a query may attend. Masked
// positions get exactly zero weight. `dropout` applies to the weights.
AttentionResult ScaledDotProductAttention(const torch::Tensor& query,
                                          const torch::Tensor& key,
                                          const torch::Tensor& value,
                                          const torch::Tensor& mask,
                                          torch::nn::Dropout& dropout);

// Multi-head attention with separate steps for projecting keys/values, so a
// decoder can cache them (self-attention) or compute them once per source
// (cross-attention).
class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  MultiHeadAttentionImpl(int64_t d_model, int64_t heads, double dropout);

  // Attention of `query` [batch, q_len, d_model] over `memory`
  // [batch, kv_len, d_model]; returns [batch, q_len, d_model].
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& memory,
                        const torch::Tensor& mask);

  // Keys and values of `memory`, each [batch, heads, kv_len, d_k].
  std::pair<torch::Tensor, torch::Tensor> ProjectKeysValues(
      const torch::Tensor& memory);

  // Attention of `query` [batch, q_len, d_model] over projected keys and
  // values; returns [batch, q_len, d_model].
  torch::Tensor AttendProjected(const torch::Tensor& query,
                                const torch::Tensor& keys,
                                const torch::Tensor& values,
                                const torch::Tensor& mask);

 private:
  // [batch, len, d_model] -> [batch, heads, len, d_k]
  torch::Tensor SplitHeads(const torch::Tensor& x) const;

  int64_t heads_;
  int64_t d_k_;
  torch::nn::Linear query_projection_{nullptr};
  torch::nn::Linear key_projection_{nullptr};
  torch::nn::Linear value_projection_{nullptr};
  torch::nn::Linear output_projection_{nullptr};
  torch::nn::Dropout attention_dropout_{nullptr};
};
TORCH_MODULE(MultiHeadAttention);

}  // namespace fanyi

#endif  // FANYI_COMMON_MULTI_HEAD_ATTENTION_H_
