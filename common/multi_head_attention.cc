#include "common/multi_head_attention.h"

#include <ATen/ops/matmul.h>
#include <ATen/ops/softmax.h>

#include <cmath>
#include <limits>

namespace fanyi {

AttentionResult ScaledDotProductAttention(const torch::Tensor& query,
                                          const torch::Tensor& key,
                                          const torch::Tensor& value,
                                          const torch::Tensor& mask,
                                          torch::nn::Dropout& dropout) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
  // [batch, heads, q_len, kv_len]
  torch::Tensor scores = at::matmul(query, key.transpose(-2, -1)) * scale;
  // -inf gives masked keys exactly zero weight; every query keeps at least
  // one key (its own position, or a real source token), so no row is all -inf.
  scores = scores.masked_fill(mask.logical_not(),
                              -std::numeric_limits<float>::infinity());
  torch::Tensor weights = at::softmax(scores, -1);
  // [batch, heads, q_len, d_k]
  torch::Tensor output = at::matmul(dropout(weights), value);
  return {output, weights};
}

MultiHeadAttentionImpl::MultiHeadAttentionImpl(int64_t d_model, int64_t heads,
                                               double dropout)
    : heads_(heads), d_k_(d_model / heads) {
  query_projection_ =
      register_module("query_projection", torch::nn::Linear(d_model, d_model));
  key_projection_ =
      register_module("key_projection", torch::nn::Linear(d_model, d_model));
  value_projection_ =
      register_module("value_projection", torch::nn::Linear(d_model, d_model));
  output_projection_ =
      register_module("output_projection", torch::nn::Linear(d_model, d_model));
  attention_dropout_ =
      register_module("attention_dropout", torch::nn::Dropout(dropout));
}

torch::Tensor MultiHeadAttentionImpl::forward(const torch::Tensor& query,
                                              const torch::Tensor& memory,
                                              const torch::Tensor& mask) {
  auto [keys, values] = ProjectKeysValues(memory);
  return AttendProjected(query, keys, values, mask);
}

std::pair<torch::Tensor, torch::Tensor>
MultiHeadAttentionImpl::ProjectKeysValues(const torch::Tensor& memory) {
  // [batch, heads, kv_len, d_k] each
  return {SplitHeads(key_projection_(memory)),
          SplitHeads(value_projection_(memory))};
}

torch::Tensor MultiHeadAttentionImpl::AttendProjected(
    const torch::Tensor& query, const torch::Tensor& keys,
    const torch::Tensor& values, const torch::Tensor& mask) {
  const int64_t batch = query.size(0);
  const int64_t query_length = query.size(1);
  // [batch, heads, q_len, d_k]
  torch::Tensor projected_query = SplitHeads(query_projection_(query));
  AttentionResult attention = ScaledDotProductAttention(
      projected_query, keys, values, mask, attention_dropout_);
  // [batch, q_len, heads * d_k]
  torch::Tensor merged = attention.output.transpose(1, 2).reshape(
      {batch, query_length, heads_ * d_k_});
  return output_projection_(merged);  // [batch, q_len, d_model]
}

torch::Tensor MultiHeadAttentionImpl::SplitHeads(const torch::Tensor& x) const {
  // [batch, len, d_model] -> [batch, len, heads, d_k] -> [batch, heads, len,
  // d_k]
  return x.view({x.size(0), x.size(1), heads_, d_k_}).transpose(1, 2);
}

}  // namespace fanyi
