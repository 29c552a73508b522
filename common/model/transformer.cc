#include "common/model/transformer.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/full.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/tril.h>
#include <ATen/ops/zeros.h>
#include <torch/nn/init.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/model/row_linear.h"
#include "common/model/single_query_attention.h"
#include "common/model/step_graphs.h"
#include "common/text/vocabulary.h"

namespace fanyi {
namespace {

torch::nn::LayerNorm MakeLayerNorm(const ModelConfig& config) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.d_model})
                                  .eps(config.layer_norm_epsilon));
}

// A sublayer `f` wrapped with its residual connection and layer norm:
// x + f(norm(x)) (pre-norm), or norm(x + f(x)) (post-norm).
template <typename Sublayer>
torch::Tensor Wrapped(bool pre_norm, torch::nn::LayerNorm& norm,
                      const torch::Tensor& x, const Sublayer& f) {
  return pre_norm ? x + f(norm(x)) : norm(x + f(x));
}

// `norm`(x), or x when the model has no such norm.
torch::Tensor MaybeNorm(torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  return norm ? norm(x) : x;
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

FeedForwardImpl::FeedForwardImpl(int64_t d_model, int64_t d_ff, double dropout,
                                 Activation activation)
    : activation_(activation) {
  inner_ = register_module("inner", torch::nn::Linear(d_model, d_ff));
  outer_ = register_module("outer", torch::nn::Linear(d_ff, d_model));
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  // [batch, len, d_model] -> [batch, len, d_ff] -> [batch, len, d_model]
  torch::Tensor inner = RowLinear(x, inner_);
  switch (activation_) {
    case Activation::kRelu:
      inner = at::relu(inner);
      break;
    case Activation::kGelu:
      inner = at::gelu(inner);
      break;
    case Activation::kGeluTanh:
      inner = at::gelu(inner, "tanh");
      break;
    case Activation::kSwish:
      inner = at::silu(inner);
      break;
  }
  return RowLinear(dropout_(inner), outer_);
}

EncoderLayerImpl::EncoderLayerImpl(const ModelConfig& config)
    : pre_norm_(config.pre_norm) {
  self_attention_ = register_module(
      "self_attention",
      MultiHeadAttention(config.d_model, config.heads, config.dropout));
  feed_forward_ = register_module(
      "feed_forward", FeedForward(config.d_model, config.d_ff, config.dropout,
                                  config.activation));
  attention_norm_ = register_module("attention_norm", MakeLayerNorm(config));
  feed_forward_norm_ =
      register_module("feed_forward_norm", MakeLayerNorm(config));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x,
                                        const torch::Tensor& bias) {
  // [batch, src_len, d_model]
  torch::Tensor h =
      Wrapped(pre_norm_, attention_norm_, x, [&](const torch::Tensor& in) {
        return dropout_(self_attention_(in, in, bias));
      });
  return Wrapped(
      pre_norm_, feed_forward_norm_, h,
      [&](const torch::Tensor& in) { return dropout_(feed_forward_(in)); });
}

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
  torch::Tensor h =
      Wrapped(pre_norm_, self_attention_norm_, x, [&](const torch::Tensor& in) {
        return dropout_(self_attention_(in, in, target_bias));
      });
  h = Wrapped(pre_norm_, cross_attention_norm_, h,
              [&](const torch::Tensor& in) {
                return dropout_(cross_attention_(in, memory, source_bias));
              });
  return Wrapped(
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
  torch::Tensor h =
      Wrapped(pre_norm_, self_attention_norm_, x, [&](const torch::Tensor& in) {
        // [batch, heads, 1, d_k] each, written into cache rows [0, batch)
        QueryKeysValues projected = self_attention_->ProjectSelf(in);
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
  h = Wrapped(
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
  return Wrapped(
      pre_norm_, feed_forward_norm_, h,
      [&](const torch::Tensor& in) { return dropout_(feed_forward_(in)); });
}

TransformerImpl::TransformerImpl(const ModelConfig& config) : config_(config) {
  config_.Validate();
  source_embedding_ = register_module(
      "source_embedding",
      torch::nn::Embedding(config.source_vocab_size, config.d_model));
  target_embedding_ =
      config.share_embeddings
          ? source_embedding_
          : register_module(
                "target_embedding",
                torch::nn::Embedding(config.target_vocab_size, config.d_model));
  if (config.embedding_norms) {
    source_embedding_norm_ =
        register_module("source_embedding_norm", MakeLayerNorm(config));
    target_embedding_norm_ =
        register_module("target_embedding_norm", MakeLayerNorm(config));
  }
  encoder_layers_ = register_module("encoder_layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.encoder_layers; ++i) {
    encoder_layers_->push_back(EncoderLayer(config));
  }
  decoder_layers_ = register_module("decoder_layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.decoder_layers; ++i) {
    decoder_layers_->push_back(DecoderLayer(config));
  }
  if (config.final_norms) {
    encoder_norm_ = register_module("encoder_norm", MakeLayerNorm(config));
    decoder_norm_ = register_module("decoder_norm", MakeLayerNorm(config));
  }
  if (!config.tie_target_embeddings) {
    generator_ = register_module(
        "generator",
        torch::nn::Linear(config.d_model, config.target_vocab_size));
  } else if (config.generator_bias) {
    generator_bias_ = register_parameter(
        "generator_bias", at::zeros({config.target_vocab_size}, at::kFloat));
  }
  embedding_dropout_ =
      register_module("embedding_dropout", torch::nn::Dropout(config.dropout));
  positions_ = register_buffer(
      "positions", SinusoidalPositions(config.max_positions, config.d_model));
  // Xavier initialisation of matrices, as the reference implementations do;
  // embeddings get N(0, d_model^-1/2) so that √d_model scaling gives unit size.
  for (auto& parameter : named_parameters()) {
    if (parameter.value().dim() > 1 &&
        parameter.key().find("embedding") != std::string::npos) {
      torch::nn::init::normal_(parameter.value(), 0.0,
                               std::pow(config.d_model, -0.5));
    } else if (parameter.value().dim() > 1) {
      torch::nn::init::xavier_uniform_(parameter.value());
    }
  }
}

torch::Tensor TransformerImpl::Embed(torch::nn::Embedding& embedding,
                                     torch::nn::LayerNorm& norm,
                                     const torch::Tensor& ids) {
  const int64_t length = ids.size(1);
  if (length > config_.max_positions) {
    throw std::invalid_argument("sequence of " + std::to_string(length) +
                                " tokens exceeds the model's max_positions " +
                                std::to_string(config_.max_positions));
  }
  // [batch, len, d_model]
  torch::Tensor scaled = embedding(ids);
  if (config_.scale_embeddings) {
    scaled = scaled * std::sqrt(double(config_.d_model));
  }
  // [1, len, d_model]
  torch::Tensor positions = positions_.slice(0, 0, length).unsqueeze(0);
  return embedding_dropout_(MaybeNorm(norm, scaled + positions));
}

torch::Tensor TransformerImpl::EmbedStep(const torch::Tensor& ids,
                                         const torch::Tensor& positions) {
  torch::Tensor scaled = target_embedding_(ids);  // [batch, d_model]
  if (config_.scale_embeddings) {
    scaled = scaled * std::sqrt(double(config_.d_model));
  }
  // An index past the table throws.
  return embedding_dropout_(MaybeNorm(
      target_embedding_norm_, scaled + positions_.index_select(0, positions)));
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& source_ids,
                                       const torch::Tensor& target_input) {
  torch::Tensor source_mask = PaddingMask(source_ids);  // [batch, 1, 1, src]
  torch::Tensor memory = Encode(source_ids, source_mask);
  return Generate(DecodeFull(target_input, memory, source_mask));
}

bool TransformerImpl::UsesKernel() const {
  return inference_kernel_ != nullptr && !is_training() &&
         !at::GradMode::is_enabled();
}

void TransformerImpl::RequireWeights() const {
  if (weights_released_) {
    throw std::logic_error(
        "the model's weights were released to its inference kernel, which "
        "runs only in eval mode without autograd");
  }
}

void TransformerImpl::ReleaseWeights() {
  if (inference_kernel_ == nullptr) {
    throw std::logic_error("ReleaseWeights: no kernel holds the weights");
  }
  // Empty tensors of the same type and device: what asks a parameter its
  // device or type still gets an answer.
  for (torch::Tensor& parameter : parameters()) {
    parameter.set_data(at::empty({0}, parameter.options()));
  }
  for (torch::Tensor& buffer : buffers()) {
    buffer.set_data(at::empty({0}, buffer.options()));
  }
  weights_released_ = true;
}

torch::Tensor TransformerImpl::Encode(const torch::Tensor& source_ids,
                                      const torch::Tensor& source_mask) {
  if (UsesKernel()) return inference_kernel_->Encode(source_ids, source_mask);
  RequireWeights();
  torch::Tensor x =
      Embed(source_embedding_, source_embedding_norm_, source_ids);
  // [batch, 1, 1, src_len]
  torch::Tensor bias = AttentionBias(source_mask, x.scalar_type());
  for (const auto& layer : *encoder_layers_) {
    x = layer->as<EncoderLayer>()->forward(x, bias);
  }
  return MaybeNorm(encoder_norm_, x);  // [batch, src_len, d_model]
}

torch::Tensor TransformerImpl::DecodeFull(const torch::Tensor& target_input,
                                          const torch::Tensor& memory,
                                          const torch::Tensor& source_mask) {
  RequireWeights();
  torch::Tensor x =
      Embed(target_embedding_, target_embedding_norm_, target_input);
  // [1, 1, tgt_len, tgt_len]
  torch::Tensor target_bias = AttentionBias(
      CausalMask(target_input.size(1), target_input.device()), x.scalar_type());
  // [batch, 1, 1, src_len]
  torch::Tensor source_bias = AttentionBias(source_mask, x.scalar_type());
  for (const auto& layer : *decoder_layers_) {
    x = layer->as<DecoderLayer>()->forward(x, memory, source_bias, target_bias);
  }
  return MaybeNorm(decoder_norm_, x);  // [batch, tgt_len, d_model]
}

DecoderState TransformerImpl::StartDecoding(const torch::Tensor& memory,
                                            const torch::Tensor& source_mask,
                                            const torch::Tensor& sources) {
  DecoderState state;
  const torch::TensorOptions ids = memory.options().dtype(at::kLong);
  // [batch]: the source of each row.
  state.memory_rows =
      sources.defined() ? sources : at::arange(memory.size(0), ids);
  const int64_t batch = state.memory_rows.size(0);
  // [batch, 1, 1, src_len]
  state.source_bias = AttentionBias(source_mask, memory.scalar_type())
                          .index_select(0, state.memory_rows);
  state.self_bias_storage =
      at::zeros({batch, 1, 1, DecoderState::kInitialColumns}, memory.options());
  state.positions = at::zeros({batch}, ids);
  state.self_rows = at::zeros({batch, DecoderState::kInitialColumns}, ids);
  // Each row's source length, one past its last real position, read back
  // once here so that the steps never read the biases back: [batch].
  const int64_t source_length = source_mask.size(-1);
  const torch::Tensor lengths =
      source_length == 0
          ? at::zeros({batch}, ids.device(at::kCPU))
          : (source_mask.reshape({-1, source_length}).to(at::kLong) *
             at::arange(1, source_length + 1, ids))
                .amax(1)
                .index_select(0, state.memory_rows)
                .to(at::kCPU);
  state.row_source_lengths.assign(lengths.data_ptr<int64_t>(),
                                  lengths.data_ptr<int64_t>() + batch);
  state.row_first_columns.assign(batch, 0);
  state.source_capacity = memory.size(1);
  state.layers.resize(decoder_layers_->size());
  std::vector<std::pair<torch::Tensor, torch::Tensor>> projected(
      decoder_layers_->size());
  if (UsesKernel()) {
    projected = inference_kernel_->MemoryKeysValues(memory);
  } else {
    RequireWeights();
  }
  for (size_t i = 0; i < decoder_layers_->size(); ++i) {
    decoder_layers_[i]->as<DecoderLayer>()->StartDecoding(
        memory, batch, DecoderState::kInitialColumns, &state.layers[i],
        std::move(projected[i]));
  }
  return state;
}

void TransformerImpl::SetInferenceKernel(
    std::shared_ptr<const InferenceKernel> kernel) {
  RequireWeights();
  inference_kernel_ = std::move(kernel);
}

torch::Tensor TransformerImpl::DecodeStep(const torch::Tensor& last_tokens,
                                          DecoderState* state,
                                          StepGraphs* graphs) {
  if (UsesKernel()) return inference_kernel_->Step(last_tokens, state);
  RequireWeights();
  state->alignment = torch::Tensor();
  const int64_t column = state->AddColumn();
  // [1]: the cache column this step writes.
  const torch::Tensor column_index =
      at::full({1}, column, state->positions.options());
  const std::vector<torch::Tensor> inputs = {
      last_tokens,       state->positions,
      column_index,      state->self_bias_storage,
      state->self_rows,  state->memory_rows,
      state->source_bias};
  torch::Tensor logits;  // [batch, target_vocab]
  if (graphs != nullptr && !state->wants_alignment) {
    // A graph replays on any later step with the same key, so it attends
    // to every column up to the capacity, those past this step's masked.
    logits = graphs->Run(state->CacheLayout(), inputs,
                         [&](const std::vector<torch::Tensor>& captured) {
                           return StepColumns(captured, *state,
                                              state->capacity(), true);
                         });
  } else {
    logits = StepColumns(inputs, *state, state->end_column, false);
  }
  state->positions = state->positions + 1;
  return logits;
}

torch::Tensor TransformerImpl::StepColumns(
    const std::vector<torch::Tensor>& inputs, DecoderState& state,
    int64_t end_column, bool mask_later_columns) {
  const torch::Tensor& last_tokens = inputs[0];        // [batch]
  const torch::Tensor& positions = inputs[1];          // [batch]
  const torch::Tensor& column = inputs[2];             // [1]
  const torch::Tensor& self_bias_storage = inputs[3];  // [batch, 1, 1, cap]
  const torch::Tensor& self_rows_storage = inputs[4];  // [batch, capacity]
  const torch::Tensor& memory_rows = inputs[5];        // [batch]
  const torch::Tensor& source_bias = inputs[6];        // [batch, 1, 1, src_len]
  const int64_t batch = last_tokens.size(0);
  const int64_t first = state.first_column;
  const int64_t columns = end_column - first;
  // Each row sees its own columns, this step's included: [batch, 1, 1,
  // columns].
  torch::Tensor self_bias = self_bias_storage.narrow(3, first, columns);
  if (mask_later_columns) {
    // [columns] bool: true past this step's column (not written yet).
    const torch::Tensor later =
        at::arange(first, end_column, column.options()).gt(column);
    self_bias =
        self_bias.masked_fill(later, -std::numeric_limits<float>::infinity());
  }
  // The cache rows each row reads: [batch, columns] and [batch, src_len].
  const torch::Tensor self_rows = self_rows_storage.narrow(1, first, columns);
  const torch::Tensor source_rows =
      memory_rows.unsqueeze(1).expand({batch, source_bias.size(3)});
  // Rows may be at different positions (they joined at different steps):
  // [batch] -> [batch, 1, d_model].
  torch::Tensor x = EmbedStep(last_tokens, positions).unsqueeze(1);
  for (size_t i = 0; i < decoder_layers_->size(); ++i) {
    const bool aligns = state.wants_alignment &&
                        static_cast<int64_t>(i) == config_.AlignmentLayer();
    x = decoder_layers_[i]->as<DecoderLayer>()->Step(
        x, source_bias, self_bias, self_rows, source_rows, first, column,
        &state.layers[i], aligns ? &state.alignment : nullptr,
        config_.AlignmentHeads());
  }
  // [batch, target_vocab]
  return Generate(MaybeNorm(decoder_norm_, x)).squeeze(1);
}

torch::Tensor TransformerImpl::Generate(const torch::Tensor& hidden) {
  RequireWeights();
  // Tied: the target embedding matrix doubles as the output projection.
  const torch::Tensor logits =
      generator_
          ? RowLinear(hidden, generator_)
          : RowLinear(hidden, target_embedding_->weight, generator_bias_);
  // A model cast to half precision (SelectDecoder) still hands the search
  // float32 logits.
  const at::ScalarType type = logits.scalar_type();
  return type == at::kHalf || type == at::kBFloat16 ? logits.to(at::kFloat)
                                                    : logits;
}

}  // namespace fanyi
