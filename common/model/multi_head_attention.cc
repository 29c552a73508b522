#include "common/model/multi_head_attention.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/zeros.h>

#include <cmath>
#include <limits>

#include "common/model/row_linear.h"
#include "common/model/single_query_attention.h"
#include "common/model/torch_compat.h"

namespace fanyi {

torch::Tensor AttentionBias(const torch::Tensor& mask, at::ScalarType dtype) {
  return at::zeros(mask.sizes(), mask.options().dtype(dtype))
      .masked_fill_(mask.logical_not(),
                    -std::numeric_limits<float>::infinity());
}

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
    : heads_(heads),
      d_k_(d_model / heads),
      scale_(1.0 / std::sqrt(static_cast<double>(d_model / heads))) {
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
                                              const torch::Tensor& bias) {
  if (query.is_same(memory)) {
    QueryKeysValues projected = ProjectSelf(query);
    return Attend(projected.query, projected.keys, projected.values, bias);
  }
  auto [keys, values] = ProjectKeysValues(memory);
  return Attend(ProjectQuery(query), keys, values, bias);
}

QueryKeysValues MultiHeadAttentionImpl::ProjectSelf(const torch::Tensor& x) {
  std::shared_ptr<const FusedProjections> fused = Fused();
  if (!fused) {
    auto [keys, values] = ProjectKeysValues(x);
    return {ProjectQuery(x), keys, values};
  }
  // [batch, len, 3 * d_model] -> [batch, len, 3, heads, d_k]
  //   -> [3, batch, heads, len, d_k]
  torch::Tensor stacked = RowLinear(x, fused->weight, fused->bias)
                              .view({x.size(0), x.size(1), 3, heads_, d_k_})
                              .permute({2, 0, 3, 1, 4});
  return {stacked[0], stacked[1], stacked[2]};
}

torch::Tensor MultiHeadAttentionImpl::ProjectQuery(const torch::Tensor& x) {
  std::shared_ptr<const FusedProjections> fused = Fused();
  if (!fused) return SplitHeads(RowLinear(x, query_projection_)) * scale_;
  const int64_t d_model = heads_ * d_k_;
  // [batch, heads, len, d_k]
  return SplitHeads(RowLinear(x, fused->weight.narrow(0, 0, d_model),
                              fused->bias.narrow(0, 0, d_model)));
}

std::pair<torch::Tensor, torch::Tensor>
MultiHeadAttentionImpl::ProjectKeysValues(const torch::Tensor& memory) {
  std::shared_ptr<const FusedProjections> fused = Fused();
  if (!fused) {
    // [batch, heads, kv_len, d_k] each
    return {SplitHeads(RowLinear(memory, key_projection_)),
            SplitHeads(RowLinear(memory, value_projection_))};
  }
  const int64_t d_model = heads_ * d_k_;
  // [batch, kv_len, 2 * d_model] -> [2, batch, heads, kv_len, d_k]
  torch::Tensor stacked =
      RowLinear(memory, fused->weight.narrow(0, d_model, 2 * d_model),
                fused->bias.narrow(0, d_model, 2 * d_model))
          .view({memory.size(0), memory.size(1), 2, heads_, d_k_})
          .permute({2, 0, 3, 1, 4});
  return {stacked[0], stacked[1]};
}

torch::Tensor MultiHeadAttentionImpl::Attend(const torch::Tensor& query,
                                             const torch::Tensor& keys,
                                             const torch::Tensor& values,
                                             const torch::Tensor& bias,
                                             const torch::Tensor& rows) {
  const int64_t batch = query.size(0);
  const int64_t query_length = query.size(2);
  const double dropout_p =
      is_training() ? attention_dropout_->options.p() : 0.0;
  // [batch, heads, q_len, d_k]
  torch::Tensor output;
  if (dropout_p == 0 && !at::GradMode::is_enabled() &&
      SingleQueryAttentionApplies(query, keys, values, bias, rows)) {
    output = SingleQueryAttention(query, keys, values, bias, rows);
  } else if (rows.defined()) {
    // Elsewhere (the GPU) each row's keys and values are gathered first.
    output = compat::Attention(query, GatherCacheRows(keys, rows),
                               GatherCacheRows(values, rows), bias, dropout_p);
  } else {
    output = compat::Attention(query, keys, values, bias, dropout_p);
  }
  // [batch, q_len, heads * d_k]
  torch::Tensor merged =
      output.transpose(1, 2).reshape({batch, query_length, heads_ * d_k_});
  return RowLinear(merged, output_projection_);  // [batch, q_len, d_model]
}

torch::Tensor MultiHeadAttentionImpl::SplitHeads(const torch::Tensor& x) const {
  // [batch, len, d_model] -> [batch, len, heads, d_k] -> [batch, heads, len,
  // d_k]
  return x.view({x.size(0), x.size(1), heads_, d_k_}).transpose(1, 2);
}

std::shared_ptr<const MultiHeadAttentionImpl::FusedProjections>
MultiHeadAttentionImpl::Fused() {
  if (is_training() || at::GradMode::is_enabled()) return nullptr;
  std::lock_guard<std::mutex> lock(fused_mutex_);
  if (fused_ && IsCurrent(*fused_)) return fused_;
  auto fused = std::make_shared<FusedProjections>();
  fused->weight = at::cat({query_projection_->weight * scale_,
                           key_projection_->weight, value_projection_->weight});
  fused->bias = at::cat({query_projection_->bias * scale_,
                         key_projection_->bias, value_projection_->bias});
  fused->versions = ParameterVersions();
  fused_ = std::move(fused);
  return fused_;
}

bool MultiHeadAttentionImpl::IsCurrent(const FusedProjections& fused) const {
  const torch::Tensor& weight = query_projection_->weight;
  return fused.weight.device() == weight.device() &&
         fused.weight.scalar_type() == weight.scalar_type() &&
         fused.versions == ParameterVersions();
}

std::array<int64_t, 6> MultiHeadAttentionImpl::ParameterVersions() const {
  // In-place updates (an optimizer step, loading weights) bump a tensor's
  // version; inference tensors have none and cannot be updated anyway.
  const torch::Tensor* parameters[] = {
      &query_projection_->weight, &query_projection_->bias,
      &key_projection_->weight,   &key_projection_->bias,
      &value_projection_->weight, &value_projection_->bias};
  std::array<int64_t, 6> versions;
  for (size_t i = 0; i < versions.size(); ++i) {
    versions[i] = parameters[i]->is_inference() ? 0 : parameters[i]->_version();
  }
  return versions;
}

}  // namespace fanyi
