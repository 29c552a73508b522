#include "common/model/ctranslate2_weights.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace fanyi {
namespace {

// The output bias of rows fanyi adds: far enough below any real logit that
// their probability is 0 in float32, yet finite, so that a label-smoothed
// loss stays finite when an imported model is fine-tuned.
constexpr double kNeverPredicted = -10000.0;

// `table` [ct2_rows, ...] in fanyi's order: [fanyi_rows, ...], zeros where
// fanyi adds a row of zeros.
torch::Tensor Reordered(const torch::Tensor& table,
                        const Ct2VocabularyMap& map) {
  std::vector<int64_t> rows = map.rows;
  std::vector<int64_t> zero_rows;
  for (size_t id = 0; id < rows.size(); ++id) {
    if (rows[id] < 0) {
      rows[id] = 0;
      zero_rows.push_back(static_cast<int64_t>(id));
    }
  }
  torch::Tensor reordered = table.index_select(0, at::tensor(rows, at::kLong));
  if (!zero_rows.empty()) {
    reordered.index_fill_(0, at::tensor(zero_rows, at::kLong), 0);
  }
  return reordered;
}

// Copies CTranslate2's variables into a fanyi Transformer's parameters.
class WeightCopier {
 public:
  WeightCopier(const Ct2ModelFile& model, TransformerImpl& transformer)
      : model_(model) {
    for (auto& parameter : transformer.named_parameters()) {
      tensors_.emplace(parameter.key(), parameter.value());
    }
    for (auto& buffer : transformer.named_buffers()) {
      tensors_.emplace(buffer.key(), buffer.value());
    }
  }

  void Set(const std::string& name, const torch::Tensor& value) {
    torch::Tensor& tensor = tensors_.at(name);
    if (tensor.sizes() != value.sizes()) {
      throw std::logic_error("import: " + name + " has another shape");
    }
    tensor.copy_(value);
  }

  torch::Tensor Float(const std::string& name) const {
    return model_.Float(name);
  }

  // CTranslate2's linear `ct2` [rows, columns] as the fanyi linears
  // `names`, each taking its share of the rows (a fused projection is
  // split); an absent bias is zeros.
  void Linear(const std::string& ct2, const std::vector<std::string>& names) {
    const torch::Tensor weight = model_.Float(ct2 + "/weight");
    const torch::Tensor bias = model_.Has(ct2 + "/bias")
                                   ? model_.Float(ct2 + "/bias")
                                   : at::zeros({weight.size(0)}, at::kFloat);
    const auto parts = static_cast<int64_t>(names.size());
    const std::vector<torch::Tensor> weights = weight.chunk(parts, 0);
    const std::vector<torch::Tensor> biases = bias.chunk(parts, 0);
    for (int64_t i = 0; i < parts; ++i) {
      Set(names[i] + ".weight", weights[i]);
      Set(names[i] + ".bias", biases[i]);
    }
  }

  void LayerNorm(const std::string& ct2, const std::string& name) {
    Set(name + ".weight", model_.Float(ct2 + "/gamma"));
    Set(name + ".bias", model_.Float(ct2 + "/beta"));
  }

 private:
  const Ct2ModelFile& model_;
  std::unordered_map<std::string, torch::Tensor> tensors_;
};

// One layer, CTranslate2's `ct2` into fanyi's `own`: its self-attention
// (whose norm fanyi calls `self_norm`), a decoder layer's cross-attention,
// and its feed-forward block.
void CopyLayer(const std::string& ct2, const std::string& own,
               const std::string& self_norm, bool decoder, WeightCopier& copy) {
  copy.LayerNorm(ct2 + "/self_attention/layer_norm", own + "." + self_norm);
  copy.Linear(ct2 + "/self_attention/linear_0",
              {own + ".self_attention.query_projection",
               own + ".self_attention.key_projection",
               own + ".self_attention.value_projection"});
  copy.Linear(ct2 + "/self_attention/linear_1",
              {own + ".self_attention.output_projection"});
  if (decoder) {
    copy.LayerNorm(ct2 + "/attention/layer_norm",
                   own + ".cross_attention_norm");
    copy.Linear(ct2 + "/attention/linear_0",
                {own + ".cross_attention.query_projection"});
    copy.Linear(ct2 + "/attention/linear_1",
                {own + ".cross_attention.key_projection",
                 own + ".cross_attention.value_projection"});
    copy.Linear(ct2 + "/attention/linear_2",
                {own + ".cross_attention.output_projection"});
  }
  copy.LayerNorm(ct2 + "/ffn/layer_norm", own + ".feed_forward_norm");
  copy.Linear(ct2 + "/ffn/linear_0", {own + ".feed_forward.inner"});
  copy.Linear(ct2 + "/ffn/linear_1", {own + ".feed_forward.outer"});
}

void CopyLayers(const Ct2TransformerOptions& options, WeightCopier& copy) {
  for (int64_t i = 0; i < options.encoder.layers; ++i) {
    CopyLayer("encoder/layer_" + std::to_string(i),
              "encoder_layers." + std::to_string(i), "attention_norm", false,
              copy);
  }
  for (int64_t i = 0; i < options.decoder.layers; ++i) {
    CopyLayer("decoder/layer_" + std::to_string(i),
              "decoder_layers." + std::to_string(i), "self_attention_norm",
              true, copy);
  }
}

// The embeddings, their norms, the final norms and the generator.
void CopyEnds(const Ct2TransformerOptions& options,
              const Ct2VocabularyMap& source, const Ct2VocabularyMap& target,
              WeightCopier& copy) {
  copy.Set("source_embedding.weight",
           Reordered(copy.Float("encoder/embeddings_0/weight"), source));
  if (!options.shared_embeddings) {
    copy.Set("target_embedding.weight",
             Reordered(copy.Float("decoder/embeddings/weight"), target));
  }
  if (options.encoder.layernorm_embedding) {
    copy.LayerNorm("encoder/layernorm_embedding", "source_embedding_norm");
    copy.LayerNorm("decoder/layernorm_embedding", "target_embedding_norm");
  }
  if (options.encoder.final_norm) {
    copy.LayerNorm("encoder/layer_norm", "encoder_norm");
    copy.LayerNorm("decoder/layer_norm", "decoder_norm");
  }
  torch::Tensor bias =
      options.projection_bias
          ? Reordered(copy.Float("decoder/projection/bias"), target)
          : at::zeros({static_cast<int64_t>(target.rows.size())}, at::kFloat);
  for (int64_t id : target.added) bias[id] = kNeverPredicted;
  if (options.tied_projection) {
    copy.Set("generator_bias", bias);
  } else {
    copy.Set("generator.weight",
             Reordered(copy.Float("decoder/projection/weight"), target));
    copy.Set("generator.bias", bias);
  }
}

}  // namespace

void CopyCt2Weights(const Ct2ModelFile& model,
                    const Ct2TransformerOptions& options,
                    const Ct2VocabularyMap& source,
                    const Ct2VocabularyMap& target,
                    const torch::Tensor& positions,
                    TransformerImpl& transformer) {
  at::NoGradGuard no_grad;
  WeightCopier copy(model, transformer);
  copy.Set("positions", positions);
  CopyEnds(options, source, target, copy);
  CopyLayers(options, copy);
}

}  // namespace fanyi
