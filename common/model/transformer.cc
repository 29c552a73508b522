#include "common/model/transformer.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/tril.h>
#include <ATen/ops/zeros.h>
#include <torch/nn/init.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/model/decoder_layer.h"
#include "common/model/encoder_layer.h"
#include "common/model/multi_head_attention.h"
#include "common/model/residual_sublayer.h"
#include "common/model/row_linear.h"
#include "common/text/vocabulary.h"

namespace fanyi {

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

void TransformerImpl::SetInferenceKernel(
    std::shared_ptr<const InferenceKernel> kernel) {
  RequireWeights();
  inference_kernel_ = std::move(kernel);
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
