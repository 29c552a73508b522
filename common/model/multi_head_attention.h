#ifndef FANYI_COMMON_MODEL_MULTI_HEAD_ATTENTION_H_
#define FANYI_COMMON_MODEL_MULTI_HEAD_ATTENTION_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <array>
#include <memory>
#include <mutex>
#include <utility>

namespace fanyi {

// Additive attention bias of a boolean mask (true where a query may attend):
// 0 where true, -inf where false, same shape, of type `dtype`. Computed once
// per batch (or decoding step) and shared by every layer.
torch::Tensor AttentionBias(const torch::Tensor& mask, at::ScalarType dtype);

// Output and weights of scaled dot-product attention.
struct AttentionResult {
  torch::Tensor output;   // [batch, heads, q_len, d_k]
  torch::Tensor weights;  // [batch, heads, q_len, kv_len]; rows sum to 1.
};

// softmax(q·kᵀ/√d_k)·v where `mask` (bool, broadcastable to
// [batch, heads, q_len, kv_len]) is true where a query may attend. Masked
// positions get exactly zero weight. `dropout` applies to the weights. The
// textbook form, kept as the reference that the fast path (which never
// materialises the weights) is tested against.
AttentionResult ScaledDotProductAttention(const torch::Tensor& query,
                                          const torch::Tensor& key,
                                          const torch::Tensor& value,
                                          const torch::Tensor& mask,
                                          torch::nn::Dropout& dropout);

// Query, keys and values of one input, each [batch, heads, len, d_k]; the
// query is already scaled by 1/√d_k.
struct QueryKeysValues {
  torch::Tensor query;
  torch::Tensor keys;
  torch::Tensor values;
};

// Multi-head attention with separate steps for projecting keys/values, so a
// decoder can cache them (self-attention) or compute them once per source
// (cross-attention). Attention masks are additive biases (AttentionBias).
//
// For inference (eval mode, no autograd) the query, key and value
// projections are multiplied as one fused matrix, built from the parameters
// on first use and rebuilt whenever they change (version, device or type),
// so a decoding step runs one matrix product instead of three. Parameters
// stay separate: checkpoints and training are unaffected.
class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  MultiHeadAttentionImpl(int64_t d_model, int64_t heads, double dropout);

  // Attention of `query` [batch, q_len, d_model] over `memory`
  // [batch, kv_len, d_model] (the same tensor for self-attention); `bias`
  // broadcastable to [batch, heads, q_len, kv_len]. Returns
  // [batch, q_len, d_model].
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& memory,
                        const torch::Tensor& bias);

  // Self-attention projections of `x` [batch, len, d_model].
  QueryKeysValues ProjectSelf(const torch::Tensor& x);

  // Scaled query of `x` [batch, len, d_model] -> [batch, heads, len, d_k].
  torch::Tensor ProjectQuery(const torch::Tensor& x);

  // Keys and values of `memory`, each [batch, heads, kv_len, d_k].
  std::pair<torch::Tensor, torch::Tensor> ProjectKeysValues(
      const torch::Tensor& memory);

  // Attention of a projected, scaled query [batch, heads, q_len, d_k] over
  // projected keys and values; returns [batch, q_len, d_model]. With `rows`
  // (a decoding step), `keys` and `values` are a cache that each row reads
  // through that table (GatherCacheRows).
  torch::Tensor Attend(const torch::Tensor& query, const torch::Tensor& keys,
                       const torch::Tensor& values, const torch::Tensor& bias,
                       const torch::Tensor& rows = {});

 private:
  // The projections stacked as one [3 * d_model, d_model] matrix (query rows
  // pre-scaled by 1/√d_k), and what they were built from.
  struct FusedProjections {
    torch::Tensor weight;  // [3 * d_model, d_model]: query, key, value rows.
    torch::Tensor bias;    // [3 * d_model]
    std::array<int64_t, 6> versions;  // Of the six source parameters.
  };

  // [batch, len, d_model] -> [batch, heads, len, d_k]
  torch::Tensor SplitHeads(const torch::Tensor& x) const;

  // The fused projections for inference, or nullptr while training or
  // recording gradients (then the separate layers run, so gradients flow).
  std::shared_ptr<const FusedProjections> Fused();

  // Whether `fused` was built from the parameters as they are now.
  bool IsCurrent(const FusedProjections& fused) const;

  // Versions of the query, key and value weights and biases.
  std::array<int64_t, 6> ParameterVersions() const;

  int64_t heads_;
  int64_t d_k_;
  double scale_;  // 1/√d_k
  torch::nn::Linear query_projection_{nullptr};
  torch::nn::Linear key_projection_{nullptr};
  torch::nn::Linear value_projection_{nullptr};
  torch::nn::Linear output_projection_{nullptr};
  torch::nn::Dropout attention_dropout_{nullptr};

  std::mutex fused_mutex_;  // Guards fused_, so decoders may share a model.
  std::shared_ptr<const FusedProjections> fused_;
};
TORCH_MODULE(MultiHeadAttention);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_MULTI_HEAD_ATTENTION_H_
