#include "common/decoding/packed_weights.h"

#include <ATen/ops/cat.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace fanyi {
namespace {

using Parameters = std::map<std::string, torch::Tensor>;

// The model's parameters and buffers by their checkpoint names.
Parameters NamedTensors(TransformerImpl& model) {
  Parameters tensors;
  for (const auto& item : model.named_parameters()) {
    tensors[item.key()] = item.value().detach();
  }
  for (const auto& item : model.named_buffers()) {
    tensors[item.key()] = item.value().detach();
  }
  return tensors;
}

const torch::Tensor& Find(const Parameters& tensors, const std::string& name) {
  auto found = tensors.find(name);
  if (found == tensors.end()) {
    throw std::invalid_argument("PackedTransformer: the model has no " + name);
  }
  return found->second;
}

std::vector<float> Floats(const torch::Tensor& tensor) {
  const torch::Tensor flat = tensor.contiguous().view({-1});
  const float* data = flat.data_ptr<float>();
  return std::vector<float>(data, data + flat.numel());
}

}  // namespace

PackedWeights::PackedWeights(TransformerImpl& model, CpuIsa isa,
                             ComputeType compute_type) {
  const ModelConfig& config = model.config();
  c10::InferenceMode inference;
  const Parameters tensors = NamedTensors(model);
  d_model = config.d_model;
  heads = config.heads;
  d_k = d_model / heads;
  d_ff = config.d_ff;
  source_vocabulary = config.source_vocab_size;
  vocabulary = config.target_vocab_size;
  max_positions = config.max_positions;
  alignment_layer = config.AlignmentLayer();
  alignment_heads = config.AlignmentHeads();
  embedding_scale = static_cast<float>(std::sqrt(double(d_model)));
  epsilon = static_cast<float>(config.layer_norm_epsilon);
  const torch::Tensor& target_embedding =
      Find(tensors, config.share_embeddings ? "source_embedding.weight"
                                            : "target_embedding.weight");
  embedding = Floats(target_embedding);
  positions = Floats(Find(tensors, "positions"));
  auto norm = [&](const std::string& name) {
    return Norm{Floats(Find(tensors, name + ".weight")),
                Floats(Find(tensors, name + ".bias"))};
  };
  auto linear = [&](const std::string& name) {
    return PackedLinear(Find(tensors, name + ".weight"),
                        Find(tensors, name + ".bias"), isa, compute_type);
  };
  const double scale = 1.0 / std::sqrt(double(d_k));
  // Query, key and value projections as one matrix, the query rows
  // pre-scaled by 1/√d_k, as MultiHeadAttention does.
  auto projections = [&](const std::string& attention) {
    return PackedLinear(
        at::cat({Find(tensors, attention + "query_projection.weight") * scale,
                 Find(tensors, attention + "key_projection.weight"),
                 Find(tensors, attention + "value_projection.weight")}),
        at::cat({Find(tensors, attention + "query_projection.bias") * scale,
                 Find(tensors, attention + "key_projection.bias"),
                 Find(tensors, attention + "value_projection.bias")}),
        isa, compute_type);
  };
  if (!config.share_embeddings) {
    source_embedding = Floats(Find(tensors, "source_embedding.weight"));
  }
  for (int64_t i = 0; i < config.encoder_layers; ++i) {
    const std::string prefix = "encoder_layers." + std::to_string(i) + ".";
    EncoderLayer layer;
    layer.attention_norm = norm(prefix + "attention_norm");
    layer.projections = projections(prefix + "self_attention.");
    layer.output = linear(prefix + "self_attention.output_projection");
    layer.feed_forward_norm = norm(prefix + "feed_forward_norm");
    layer.feed_forward_inner = linear(prefix + "feed_forward.inner");
    layer.feed_forward_outer = linear(prefix + "feed_forward.outer");
    encoder_layers.push_back(std::move(layer));
  }
  encoder_norm = norm("encoder_norm");
  for (int64_t i = 0; i < config.decoder_layers; ++i) {
    const std::string prefix = "decoder_layers." + std::to_string(i) + ".";
    const std::string self = prefix + "self_attention.";
    const std::string cross = prefix + "cross_attention.";
    Layer layer;
    layer.self_attention_norm = norm(prefix + "self_attention_norm");
    layer.self_projections = projections(self);
    layer.self_output = linear(self + "output_projection");
    layer.cross_attention_norm = norm(prefix + "cross_attention_norm");
    layer.cross_query =
        PackedLinear(Find(tensors, cross + "query_projection.weight") * scale,
                     Find(tensors, cross + "query_projection.bias") * scale,
                     isa, compute_type);
    layer.cross_keys_values = PackedLinear(
        at::cat({Find(tensors, cross + "key_projection.weight"),
                 Find(tensors, cross + "value_projection.weight")}),
        at::cat({Find(tensors, cross + "key_projection.bias"),
                 Find(tensors, cross + "value_projection.bias")}),
        isa, compute_type);
    layer.cross_output = linear(cross + "output_projection");
    layer.feed_forward_norm = norm(prefix + "feed_forward_norm");
    layer.feed_forward_inner = linear(prefix + "feed_forward.inner");
    layer.feed_forward_outer = linear(prefix + "feed_forward.outer");
    layers.push_back(std::move(layer));
  }
  final_norm = norm("decoder_norm");
  generator =
      config.tie_target_embeddings
          ? PackedLinear(target_embedding,
                         config.generator_bias ? Find(tensors, "generator_bias")
                                               : torch::Tensor(),
                         isa, compute_type)
          : linear("generator");
}

}  // namespace fanyi
