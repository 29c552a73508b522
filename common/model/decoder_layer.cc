#include "common/model/decoder_layer.h"

#include <ATen/ops/matmul.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/zeros.h>

#include <tuple>
#include <vector>

#include "common/model/residual_sublayer.h"
#include "common/model/single_query_attention.h"

namespace fanyi {

DecoderLayerImpl::DecoderLayerImpl(const ModelConfig& config)
    : pre_norm_(config.pre_norm) {
  self_attention_ = register_module(
      "self_attention",
      MultiHeadAttention(config.d_model, config.heads, config.dropout));
  cross_attention_ = register_module(
      "cross_attention",
      MultiHeadAttention(config.d_model, config.heads, config.dropout));
  feed_forward_ = register_module(
      "feed_forward", FeedForward(config.d_model, config.d_ff, config.dropout,
                                  config.activation));
  self_attention_norm_ =
      register_module("self_attention_norm", MakeLayerNorm(config));
  cross_attention_norm_ =
      register_module("cross_attention_norm", MakeLayerNorm(config));
  feed_forward_norm_ =
      register_module("feed_forward_norm", MakeLayerNorm(config));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& x,
                                        const torch::Tensor& memory,
                                        const torch::Tensor& source_bias,
                                        const torch::Tensor& target_bias) {
  // [batch, tgt_len, d_model]
  torch::Tensor h = WrappedSublayer(
      pre_norm_, self_attention_norm_, x, [&](const torch::Tensor& in) {
        return dropout_(self_attention_(in, in, target_bias));
      });
  h = WrappedSublayer(
      pre_norm_, cross_attention_norm_, h, [&](const torch::Tensor& in) {
        return dropout_(cross_attention_(in, memory, source_bias));
      });
  return WrappedSublayer(
      pre_norm_, feed_forward_norm_, h,
      [&](const torch::Tensor& in) { return dropout_(feed_forward_(in)); });
}

void DecoderLayerImpl::StartDecoding(
    const torch::Tensor& memory, int64_t rows, int64_t capacity,
    DecoderLayerCache* cache,
    std::pair<torch::Tensor, torch::Tensor> projected) {
  // [sources, heads, src_len, d_k] each
  std::tie(cache->memory_keys, cache->memory_values) =
      projected.first.defined() ? std::move(projected)
                                : cross_attention_->ProjectKeysValues(memory);
  // Caches hold finite values only, NaN and ±inf made 0: a CUDA graph's step
  // reads entries of sources and rows long gone under its masks (weight 0,
  // and 0 · NaN is NaN; so is inf - inf once a huge key meets the -inf
  // mask), so a source that overflowed (half precision, hostile input)
  // must not reach the requests after it.
  cache->memory_keys.nan_to_num_(0.0, 0.0, 0.0);
  cache->memory_values.nan_to_num_(0.0, 0.0, 0.0);
  std::vector<int64_t> shape = cache->memory_keys.sizes().vec();
  shape[0] = rows;
  shape[2] = capacity;  // [rows, heads, capacity, d_k]
  // Zeros, not garbage, in the columns no step has written: a CUDA graph's
  // step attends over them (masked: a NaN there would still spread).
  cache->key_storage = at::zeros(shape, cache->memory_keys.options());
  cache->value_storage = at::zeros(shape, cache->memory_keys.options());
}

torch::Tensor DecoderLayerImpl::Step(
    const torch::Tensor& x, const torch::Tensor& source_bias,
    const torch::Tensor& self_bias, const torch::Tensor& self_rows,
    const torch::Tensor& memory_rows, int64_t first_column,
    const torch::Tensor& column, DecoderLayerCache* cache,
    torch::Tensor* alignment, int64_t alignment_heads) {
  const int64_t batch = x.size(0);
  // [batch, 1, d_model]
  torch::Tensor h = WrappedSublayer(
      pre_norm_, self_attention_norm_, x, [&](const torch::Tensor& in) {
        // [batch, heads, 1, d_k] each, written into cache rows [0, batch)
        QueryKeysValues projected = self_attention_->ProjectSelf(in);
        // Finite, as StartDecoding's (in place: this step's own tensors).
        projected.keys.nan_to_num_(0.0, 0.0, 0.0);
        projected.values.nan_to_num_(0.0, 0.0, 0.0);
        cache->key_storage.narrow(0, 0, batch)
            .index_copy_(2, column, projected.keys);
        cache->value_storage.narrow(0, 0, batch)
            .index_copy_(2, column, projected.values);
        const int64_t columns = self_bias.size(3);
        // [cache_rows, heads, columns, d_k], read through self_rows
        torch::Tensor keys =
            cache->key_storage.narrow(2, first_column, columns);
        torch::Tensor values =
            cache->value_storage.narrow(2, first_column, columns);
        return dropout_(self_attention_->Attend(projected.query, keys, values,
                                                self_bias, self_rows));
      });
  h = WrappedSublayer(
      pre_norm_, cross_attention_norm_, h, [&](const torch::Tensor& in) {
        torch::Tensor query = cross_attention_->ProjectQuery(in);
        if (alignment != nullptr) {
          // [batch, heads, 1, src_len] -> [batch, src_len]
          const torch::Tensor keys = GatherCacheRows(
              cache->memory_keys.narrow(1, 0, alignment_heads), memory_rows);
          const torch::Tensor scores =
              at::matmul(query.narrow(1, 0, alignment_heads),
                         keys.transpose(-1, -2)) +
              source_bias;
          *alignment = at::softmax(scores.to(at::kFloat), -1)
                           .mean(1)
                           .squeeze(1)
                           .to(at::kCPU);
        }
        return dropout_(cross_attention_->Attend(query, cache->memory_keys,
                                                 cache->memory_values,
                                                 source_bias, memory_rows));
      });
  return WrappedSublayer(
      pre_norm_, feed_forward_norm_, h,
      [&](const torch::Tensor& in) { return dropout_(feed_forward_(in)); });
}

}  // namespace fanyi
