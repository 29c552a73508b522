#include "common/transformer.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/tril.h>
#include <ATen/ops/zeros.h>
#include <torch/nn/init.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/vocabulary.h"

namespace fanyi {
namespace {

torch::nn::LayerNorm MakeLayerNorm(const ModelConfig& config) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.d_model})
                                  .eps(config.layer_norm_epsilon));
}

}  // namespace

torch::Tensor SinusoidalPositions(int64_t max_positions, int64_t d_model) {
  // [max_positions, 1]
  torch::Tensor position =
      at::arange(max_positions, at::TensorOptions(at::kFloat)).unsqueeze(1);
  // [d_model / 2]: 1 / 10000^(2i / d_model)
  torch::Tensor frequency = at::exp(at::arange(0, d_model, 2, at::kFloat) *
                                    (-std::log(10000.0) / d_model));
  torch::Tensor table = at::zeros({max_positions, d_model}, at::kFloat);
  table.slice(1, 0, d_model, 2).copy_(at::sin(position * frequency));
  table.slice(1, 1, d_model, 2).copy_(at::cos(position * frequency));
  return table;  // [max_positions, d_model]
}

torch::Tensor PaddingMask(const torch::Tensor& ids) {
  // [batch, len] -> [batch, 1, 1, len]
  return ids.ne(Vocabulary::kPadId).unsqueeze(1).unsqueeze(2);
}

torch::Tensor CausalMask(int64_t length, const torch::Device& device) {
  // [1, 1, len, len], lower triangle true.
  return at::tril(at::ones({length, length},
                           at::TensorOptions(at::kBool).device(device)))
      .unsqueeze(0)
      .unsqueeze(0);
}

FeedForwardImpl::FeedForwardImpl(int64_t d_model, int64_t d_ff,
                                 double dropout) {
  inner_ = register_module("inner", torch::nn::Linear(d_model, d_ff));
  outer_ = register_module("outer", torch::nn::Linear(d_ff, d_model));
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  // [batch, len, d_model] -> [batch, len, d_ff] -> [batch, len, d_model]
  return outer_(dropout_(at::relu(inner_(x))));
}

EncoderLayerImpl::EncoderLayerImpl(const ModelConfig& config) {
  self_attention_ = register_module(
      "self_attention",
      MultiHeadAttention(config.d_model, config.heads, config.dropout));
  feed_forward_ = register_module(
      "feed_forward", FeedForward(config.d_model, config.d_ff, config.dropout));
  attention_norm_ = register_module("attention_norm", MakeLayerNorm(config));
  feed_forward_norm_ =
      register_module("feed_forward_norm", MakeLayerNorm(config));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x,
                                        const torch::Tensor& mask) {
  torch::Tensor normed = attention_norm_(x);
  // [batch, src_len, d_model]
  torch::Tensor h = x + dropout_(self_attention_(normed, normed, mask));
  return h + dropout_(feed_forward_(feed_forward_norm_(h)));
}

DecoderLayerImpl::DecoderLayerImpl(const ModelConfig& config) {
  self_attention_ = register_module(
      "self_attention",
      MultiHeadAttention(config.d_model, config.heads, config.dropout));
  cross_attention_ = register_module(
      "cross_attention",
      MultiHeadAttention(config.d_model, config.heads, config.dropout));
  feed_forward_ = register_module(
      "feed_forward", FeedForward(config.d_model, config.d_ff, config.dropout));
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
                                        const torch::Tensor& source_mask,
                                        const torch::Tensor& target_mask) {
  torch::Tensor normed = self_attention_norm_(x);
  // [batch, tgt_len, d_model]
  torch::Tensor h = x + dropout_(self_attention_(normed, normed, target_mask));
  h = h +
      dropout_(cross_attention_(cross_attention_norm_(h), memory, source_mask));
  return h + dropout_(feed_forward_(feed_forward_norm_(h)));
}

void DecoderLayerImpl::StartDecoding(const torch::Tensor& memory,
                                     DecoderLayerCache* cache) {
  std::tie(cache->memory_keys, cache->memory_values) =
      cross_attention_->ProjectKeysValues(memory);
  // [batch, heads, 0, d_k]: nothing generated yet.
  cache->self_keys = cache->memory_keys.slice(2, 0, 0);
  cache->self_values = cache->memory_values.slice(2, 0, 0);
}

torch::Tensor DecoderLayerImpl::Step(const torch::Tensor& x,
                                     const torch::Tensor& source_mask,
                                     const torch::Tensor& self_mask,
                                     DecoderLayerCache* cache) {
  torch::Tensor normed = self_attention_norm_(x);  // [batch, 1, d_model]
  auto [new_keys, new_values] = self_attention_->ProjectKeysValues(normed);
  // [batch, heads, columns + 1, d_k]
  cache->self_keys = at::cat({cache->self_keys, new_keys}, 2);
  cache->self_values = at::cat({cache->self_values, new_values}, 2);
  torch::Tensor h =
      x + dropout_(self_attention_->AttendProjected(
              normed, cache->self_keys, cache->self_values, self_mask));
  h = h + dropout_(cross_attention_->AttendProjected(
              cross_attention_norm_(h), cache->memory_keys,
              cache->memory_values, source_mask));
  return h + dropout_(feed_forward_(feed_forward_norm_(h)));  // [batch, 1, d]
}

TransformerImpl::TransformerImpl(const ModelConfig& config) : config_(config) {
  config_.Validate();
  source_embedding_ = register_module(
      "source_embedding",
      torch::nn::Embedding(config.source_vocab_size, config.d_model));
  target_embedding_ = register_module(
      "target_embedding",
      torch::nn::Embedding(config.target_vocab_size, config.d_model));
  encoder_layers_ = register_module("encoder_layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.encoder_layers; ++i) {
    encoder_layers_->push_back(EncoderLayer(config));
  }
  decoder_layers_ = register_module("decoder_layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.decoder_layers; ++i) {
    decoder_layers_->push_back(DecoderLayer(config));
  }
  encoder_norm_ = register_module("encoder_norm", MakeLayerNorm(config));
  decoder_norm_ = register_module("decoder_norm", MakeLayerNorm(config));
  if (!config.tie_target_embeddings) {
    generator_ = register_module(
        "generator",
        torch::nn::Linear(config.d_model, config.target_vocab_size));
  }
  embedding_dropout_ =
      register_module("embedding_dropout", torch::nn::Dropout(config.dropout));
  positions_ = register_buffer(
      "positions", SinusoidalPositions(config.max_positions, config.d_model));
  // Xavier initialisation of matrices, as the reference implementations do;
  // embeddings get N(0, d_model^-1/2) so that √d_model scaling gives unit size.
  for (auto& parameter : named_parameters()) {
    if (parameter.key().find("embedding") != std::string::npos) {
      torch::nn::init::normal_(parameter.value(), 0.0,
                               std::pow(config.d_model, -0.5));
    } else if (parameter.value().dim() > 1) {
      torch::nn::init::xavier_uniform_(parameter.value());
    }
  }
}

torch::Tensor TransformerImpl::Embed(torch::nn::Embedding& embedding,
                                     const torch::Tensor& ids) {
  const int64_t length = ids.size(1);
  if (length > config_.max_positions) {
    throw std::invalid_argument("sequence of " + std::to_string(length) +
                                " tokens exceeds the model's max_positions " +
                                std::to_string(config_.max_positions));
  }
  // [batch, len, d_model]
  torch::Tensor scaled = embedding(ids) * std::sqrt(double(config_.d_model));
  // [1, len, d_model]
  torch::Tensor positions = positions_.slice(0, 0, length).unsqueeze(0);
  return embedding_dropout_(scaled + positions);
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& source_ids,
                                       const torch::Tensor& target_input) {
  torch::Tensor source_mask = PaddingMask(source_ids);  // [batch, 1, 1, src]
  torch::Tensor memory = Encode(source_ids, source_mask);
  return Generate(DecodeFull(target_input, memory, source_mask));
}

torch::Tensor TransformerImpl::Encode(const torch::Tensor& source_ids,
                                      const torch::Tensor& source_mask) {
  torch::Tensor x = Embed(source_embedding_, source_ids);
  for (const auto& layer : *encoder_layers_) {
    x = layer->as<EncoderLayer>()->forward(x, source_mask);
  }
  return encoder_norm_(x);  // [batch, src_len, d_model]
}

torch::Tensor TransformerImpl::DecodeFull(const torch::Tensor& target_input,
                                          const torch::Tensor& memory,
                                          const torch::Tensor& source_mask) {
  torch::Tensor target_mask =
      CausalMask(target_input.size(1), target_input.device());
  torch::Tensor x = Embed(target_embedding_, target_input);
  for (const auto& layer : *decoder_layers_) {
    x = layer->as<DecoderLayer>()->forward(x, memory, source_mask, target_mask);
  }
  return decoder_norm_(x);  // [batch, tgt_len, d_model]
}

DecoderState TransformerImpl::StartDecoding(const torch::Tensor& memory,
                                            const torch::Tensor& source_mask) {
  DecoderState state;
  state.source_mask = source_mask;
  const int64_t batch = memory.size(0);
  const auto options = at::TensorOptions(memory.device());
  state.self_mask = at::zeros({batch, 1, 1, 0}, options.dtype(at::kBool));
  state.positions = at::zeros({batch}, options.dtype(at::kLong));
  state.layers.resize(decoder_layers_->size());
  for (size_t i = 0; i < decoder_layers_->size(); ++i) {
    decoder_layers_[i]->as<DecoderLayer>()->StartDecoding(memory,
                                                          &state.layers[i]);
  }
  return state;
}

torch::Tensor TransformerImpl::DecodeStep(const torch::Tensor& last_tokens,
                                          DecoderState* state) {
  const int64_t batch = last_tokens.size(0);
  // Each row sees its own columns plus the one this step appends.
  state->self_mask =
      at::cat({state->self_mask,
               at::ones({batch, 1, 1, 1}, state->self_mask.options())},
              3);  // [batch, 1, 1, columns + 1]
  // Rows may be at different positions (they joined at different steps):
  // [batch] -> [batch, 1, d_model]. An index past the table throws.
  torch::Tensor x = embedding_dropout_(
      (target_embedding_(last_tokens) * std::sqrt(double(config_.d_model)) +
       positions_.index_select(0, state->positions))
          .unsqueeze(1));
  for (size_t i = 0; i < decoder_layers_->size(); ++i) {
    x = decoder_layers_[i]->as<DecoderLayer>()->Step(
        x, state->source_mask, state->self_mask, &state->layers[i]);
  }
  state->positions = state->positions + 1;
  return Generate(decoder_norm_(x)).squeeze(1);  // [batch, target_vocab]
}

torch::Tensor TransformerImpl::Generate(const torch::Tensor& hidden) {
  if (generator_) return generator_(hidden);
  // Tied: the target embedding matrix doubles as the output projection.
  return at::linear(hidden, target_embedding_->weight);
}

}  // namespace fanyi
