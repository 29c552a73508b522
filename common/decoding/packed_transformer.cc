#include "common/decoding/packed_transformer.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/decoding/cpu_isa.h"
#include "common/decoding/row_kernels.h"

namespace fanyi {
namespace {

// What a pass computes, kept per thread between passes so that they do not
// allocate once the largest batch has been seen.
struct Workspace {
  std::vector<float> x;          // [rows, d_model]: the residual stream.
  std::vector<float> normed;     // [rows, d_model]
  std::vector<float> projected;  // [rows, 3 * d_model]
  std::vector<float> attended;   // [rows, d_model]
  std::vector<float> hidden;     // [rows, d_ff]
  AttentionColumns attention;

  // This thread's workspace, with room for `rows` rows and attention over
  // `columns` keys.
  static Workspace& ForThisThread(int64_t rows, int64_t d_model, int64_t d_ff,
                                  int64_t columns) {
    thread_local Workspace workspace;
    Grow(workspace.x, rows * d_model);
    Grow(workspace.normed, rows * d_model);
    Grow(workspace.projected, rows * 3 * d_model);
    Grow(workspace.attended, rows * d_model);
    Grow(workspace.hidden, rows * d_ff);
    workspace.attention.Reserve(columns);
    return workspace;
  }

 private:
  template <typename T>
  static void Grow(std::vector<T>& buffer, int64_t size) {
    if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(size);
  }
};

// `model`, once it is known that a PackedTransformer computes it.
TransformerImpl& Packable(TransformerImpl& model) {
  const ModelConfig& config = model.config();
  if (!PackedTransformer::Computes(config)) {
    throw std::invalid_argument(
        "PackedTransformer: computes pre-norm layers with ReLU, scaled "
        "embeddings and final norms only");
  }
  if (model.is_training()) {
    throw std::invalid_argument(
        "PackedTransformer: the model is in training mode");
  }
  for (const torch::Tensor& parameter : model.parameters()) {
    if (!parameter.device().is_cpu() || parameter.scalar_type() != at::kFloat) {
      throw std::invalid_argument(
          "PackedTransformer: the model must be float32 on the CPU");
    }
  }
  return model;
}

}  // namespace

PackedTransformer::PackedTransformer(TransformerImpl& model, CpuIsa isa,
                                     ComputeType compute_type)
    : weights_(Packable(model), isa, compute_type) {}

bool PackedTransformer::Computes(const ModelConfig& config) {
  return config.pre_norm && config.activation == Activation::kRelu &&
         config.scale_embeddings && config.final_norms &&
         !config.embedding_norms;
}

void PackedTransformer::Normalize(const Norm& norm, const float* x,
                                  int64_t rows, float* out) const {
  LayerNormRows(x, rows, weights_.d_model, norm.scale.data(), norm.shift.data(),
                weights_.epsilon, out);
}

void PackedTransformer::AddFeedForward(const Norm& norm,
                                       const PackedLinear& inner,
                                       const PackedLinear& outer, int64_t rows,
                                       float* x, float* normed,
                                       float* hidden) const {
  Normalize(norm, x, rows, normed);
  inner.Apply(normed, rows, weights_.d_model, hidden, weights_.d_ff,
              LinearEpilogue::kBiasRelu);
  outer.Apply(hidden, rows, weights_.d_ff, x, weights_.d_model,
              LinearEpilogue::kAddToOutput);
}

torch::Tensor PackedTransformer::Encode(
    const torch::Tensor& source_ids, const torch::Tensor& source_mask) const {
  if (source_ids.dim() != 2 || source_ids.scalar_type() != at::kLong ||
      !source_ids.device().is_cpu() || source_mask.dim() != 4 ||
      source_mask.scalar_type() != at::kBool ||
      source_mask.size(0) != source_ids.size(0) ||
      source_mask.size(3) != source_ids.size(1)) {
    throw std::invalid_argument(
        "PackedTransformer: Encode takes int64 CPU ids [batch, len] and a "
        "bool mask [batch, 1, 1, len]");
  }
  const int64_t batch = source_ids.size(0);
  const int64_t length = source_ids.size(1);
  const int64_t rows = batch * length;
  const int64_t d = weights_.d_model;
  if (length > weights_.max_positions) {
    throw std::out_of_range("sequence of " + std::to_string(length) +
                            " tokens exceeds the model's max_positions " +
                            std::to_string(weights_.max_positions));
  }
  const torch::Tensor ids = source_ids.contiguous();
  const torch::Tensor mask = source_mask.contiguous();
  const int64_t* id = ids.data_ptr<int64_t>();
  const bool* attends = mask.data_ptr<bool>();
  for (int64_t i = 0; i < rows; ++i) {
    if (id[i] < 0 || id[i] >= weights_.source_vocabulary) {
      throw std::out_of_range("token " + std::to_string(id[i]) +
                              " is outside the source vocabulary of " +
                              std::to_string(weights_.source_vocabulary));
    }
  }
  Workspace& work = Workspace::ForThisThread(rows, d, weights_.d_ff, length);
  float* x = work.x.data();
  float* normed = work.normed.data();
  float* projected = work.projected.data();
  float* attended = work.attended.data();

  // [batch * len, d_model]: scaled embeddings plus positions.
  for (int64_t i = 0; i < rows; ++i) {
    const float* embedding =
        (weights_.source_embedding.empty() ? weights_.embedding
                                           : weights_.source_embedding)
            .data() +
        id[i] * d;
    const float* table = weights_.positions.data() + (i % length) * d;
    for (int64_t j = 0; j < d; ++j) {
      x[i * d + j] = embedding[j] * weights_.embedding_scale + table[j];
    }
  }
  for (const EncoderLayer& layer : weights_.encoder_layers) {
    Normalize(layer.attention_norm, x, rows, normed);
    // [batch * len, 3 * d_model]: queries, keys, values.
    layer.projections.Apply(normed, rows, d, projected, 3 * d,
                            LinearEpilogue::kBias);
    for (int64_t b = 0; b < batch; ++b) {
      // Position j of sentence b: its keys and values, and whether it is a
      // real token (padding gets -inf).
      for (int64_t j = 0; j < length; ++j) {
        work.attention.offsets[j] = (b * length + j) * 3 * d;
        work.attention.column_bias[j] =
            attends[b * length + j] ? 0.0f : kMaskedBias;
      }
      for (int64_t i = b * length; i < (b + 1) * length; ++i) {
        for (int64_t h = 0; h < weights_.heads; ++h) {
          AttendHead(projected + i * 3 * d + h * weights_.d_k,
                     projected + d + h * weights_.d_k,
                     projected + 2 * d + h * weights_.d_k,
                     work.attention.offsets.data(),
                     work.attention.column_bias.data(), length, weights_.d_k,
                     work.attention.scores.data(),
                     attended + i * d + h * weights_.d_k);
        }
      }
    }
    layer.output.Apply(attended, rows, d, x, d, LinearEpilogue::kAddToOutput);
    AddFeedForward(layer.feed_forward_norm, layer.feed_forward_inner,
                   layer.feed_forward_outer, rows, x, normed,
                   work.hidden.data());
  }
  torch::Tensor memory = at::empty({batch, length, d}, at::kFloat);
  Normalize(weights_.encoder_norm, x, rows, memory.data_ptr<float>());
  return memory;  // [batch, src_len, d_model]
}

std::vector<std::pair<torch::Tensor, torch::Tensor>>
PackedTransformer::MemoryKeysValues(const torch::Tensor& memory) const {
  if (memory.dim() != 3 || memory.scalar_type() != at::kFloat ||
      !memory.device().is_cpu() || memory.size(2) != weights_.d_model) {
    throw std::invalid_argument(
        "PackedTransformer: memory must be float32 CPU [sources, len, " +
        std::to_string(weights_.d_model) + "]");
  }
  const torch::Tensor rows_in = memory.contiguous();
  const int64_t sources = memory.size(0);
  const int64_t length = memory.size(1);
  const int64_t rows = sources * length;
  const int64_t d = weights_.d_model;
  Workspace& work = Workspace::ForThisThread(rows, d, weights_.d_ff, 0);
  float* projected = work.projected.data();
  std::vector<std::pair<torch::Tensor, torch::Tensor>> result;
  for (const Layer& layer : weights_.layers) {
    // [sources * len, 2 * d_model] -> keys and values, each [sources,
    // heads, len, d_k].
    layer.cross_keys_values.Apply(rows_in.data_ptr<float>(), rows, d, projected,
                                  2 * d, LinearEpilogue::kBias);
    torch::Tensor keys =
        at::empty({sources, weights_.heads, length, weights_.d_k}, at::kFloat);
    torch::Tensor values = at::empty_like(keys);
    float* key = keys.data_ptr<float>();
    float* value = values.data_ptr<float>();
    for (int64_t s = 0; s < sources; ++s) {
      for (int64_t h = 0; h < weights_.heads; ++h) {
        for (int64_t j = 0; j < length; ++j) {
          const float* row =
              projected + (s * length + j) * 2 * d + h * weights_.d_k;
          const int64_t at =
              ((s * weights_.heads + h) * length + j) * weights_.d_k;
          std::copy_n(row, weights_.d_k, key + at);
          std::copy_n(row + d, weights_.d_k, value + at);
        }
      }
    }
    result.emplace_back(std::move(keys), std::move(values));
  }
  return result;
}

torch::Tensor PackedTransformer::Step(const torch::Tensor& last_tokens,
                                      DecoderState* state) const {
  const int64_t batch = state->batch_size();
  if (last_tokens.dim() != 1 || last_tokens.size(0) != batch ||
      last_tokens.scalar_type() != at::kLong ||
      !last_tokens.device().is_cpu()) {
    throw std::invalid_argument(
        "PackedTransformer: last_tokens must be one int64 CPU token per row");
  }
  if (state->self_rows.stride(1) != 1 ||
      state->self_bias_storage.stride(3) != 1 ||
      !state->positions.is_contiguous()) {
    throw std::logic_error(
        "PackedTransformer: unexpected decoder state layout");
  }
  const torch::Tensor tokens = last_tokens.contiguous();
  const int64_t* token = tokens.data_ptr<int64_t>();
  int64_t* position = state->positions.data_ptr<int64_t>();
  for (int64_t r = 0; r < batch; ++r) {
    if (token[r] < 0 || token[r] >= weights_.vocabulary) {
      throw std::out_of_range("token " + std::to_string(token[r]) +
                              " is outside the target vocabulary of " +
                              std::to_string(weights_.vocabulary));
    }
    if (position[r] >= weights_.max_positions) {
      throw std::out_of_range("row " + std::to_string(r) +
                              " is past the model's max_positions " +
                              std::to_string(weights_.max_positions));
    }
  }
  state->alignment = torch::Tensor();
  const int64_t column = state->AddColumn();
  const int64_t first_column = state->first_column;
  const int64_t columns = column + 1 - first_column;
  const int64_t source_length = state->source_bias.size(3);
  const int64_t d = weights_.d_model;

  Workspace& work = Workspace::ForThisThread(batch, d, weights_.d_ff,
                                             std::max(columns, source_length));
  float* x = work.x.data();
  float* normed = work.normed.data();
  float* projected = work.projected.data();
  float* attended = work.attended.data();

  // [batch, d_model]: scaled embeddings plus each row's own position.
  for (int64_t r = 0; r < batch; ++r) {
    const float* embedding = weights_.embedding.data() + token[r] * d;
    const float* table = weights_.positions.data() + position[r] * d;
    for (int64_t i = 0; i < d; ++i) {
      x[r * d + i] = embedding[i] * weights_.embedding_scale + table[i];
    }
  }

  // The tables each row reads the caches through, and the biases.
  const int64_t* self_rows = state->self_rows.data_ptr<int64_t>();
  const int64_t self_rows_stride = state->self_rows.stride(0);
  const float* self_bias = state->self_bias_storage.data_ptr<float>();
  const int64_t self_bias_stride = state->self_bias_storage.stride(0);
  const int64_t* memory_rows = state->memory_rows.data_ptr<int64_t>();
  const float* source_bias = state->source_bias.data_ptr<float>();
  const auto source_bias_strides = state->source_bias.strides();

  for (size_t l = 0; l < weights_.layers.size(); ++l) {
    const Layer& layer = weights_.layers[l];
    DecoderLayerCache& cache = state->layers[l];
    const auto cache_strides = cache.key_storage.strides();
    const auto memory_strides = cache.memory_keys.strides();
    // Each row of keys or values is d_k contiguous floats, and keys and
    // values share one layout (DecoderState makes them so).
    if (cache.value_storage.strides() != cache_strides ||
        cache.memory_values.strides() != memory_strides ||
        cache_strides[3] != 1 || memory_strides[3] != 1) {
      throw std::logic_error(
          "PackedTransformer: unexpected key/value cache layout");
    }
    float* keys = cache.key_storage.data_ptr<float>();
    float* values = cache.value_storage.data_ptr<float>();

    // Self-attention: [batch, 3 * d_model], keys and values into the cache
    // column of this step (row r writes cache row r).
    Normalize(layer.self_attention_norm, x, batch, normed);
    layer.self_projections.Apply(normed, batch, d, projected, 3 * d,
                                 LinearEpilogue::kBias);
    for (int64_t r = 0; r < batch; ++r) {
      for (int64_t h = 0; h < weights_.heads; ++h) {
        const int64_t at = r * cache_strides[0] + h * cache_strides[1] +
                           column * cache_strides[2];
        std::copy_n(projected + r * 3 * d + d + h * weights_.d_k, weights_.d_k,
                    keys + at);
        std::copy_n(projected + r * 3 * d + 2 * d + h * weights_.d_k,
                    weights_.d_k, values + at);
      }
    }
    // Row r's columns: their biases and where their keys and values are.
    auto self_columns = [&](int64_t r, float* bias, int64_t* offsets) {
      for (int64_t c = 0; c < columns; ++c) {
        const int64_t stored = first_column + c;
        bias[c] = self_bias[r * self_bias_stride + stored];
        offsets[c] =
            self_rows[r * self_rows_stride + stored] * cache_strides[0] +
            stored * cache_strides[2];
      }
    };
    AttendRows(
        projected, 3 * d, keys, values, cache_strides[1], batch, columns,
        weights_.heads, weights_.d_k, self_columns,
        [](int64_t) { return false; }, work.attention, attended);
    layer.self_output.Apply(attended, batch, d, x, d,
                            LinearEpilogue::kAddToOutput);

    // Cross-attention over each row's source.
    Normalize(layer.cross_attention_norm, x, batch, normed);
    layer.cross_query.Apply(normed, batch, d, projected, d,
                            LinearEpilogue::kBias);
    const float* memory_keys = cache.memory_keys.data_ptr<float>();
    const float* memory_values = cache.memory_values.data_ptr<float>();
    // Row r's source positions: their biases and where their keys and
    // values are.
    auto source_columns = [&](int64_t r, float* bias, int64_t* offsets) {
      for (int64_t s = 0; s < source_length; ++s) {
        bias[s] = source_bias[r * source_bias_strides[0] +
                              s * source_bias_strides[3]];
        offsets[s] = memory_rows[r] * memory_strides[0] + s * memory_strides[2];
      }
    };
    // Rows of one source (a beam's, when they are adjacent) find it fetched
    // already.
    auto same_source = [&](int64_t r) {
      return memory_rows[r + 1] == memory_rows[r];
    };
    const bool aligns = state->wants_alignment &&
                        static_cast<int64_t>(l) == weights_.alignment_layer;
    if (aligns) {
      state->alignment = at::zeros({batch, source_length}, at::kFloat);
    }
    AttendRows(projected, d, memory_keys, memory_values, memory_strides[1],
               batch, source_length, weights_.heads, weights_.d_k,
               source_columns, same_source, work.attention, attended,
               aligns ? state->alignment.data_ptr<float>() : nullptr,
               weights_.alignment_heads);
    layer.cross_output.Apply(attended, batch, d, x, d,
                             LinearEpilogue::kAddToOutput);

    // Feed-forward.
    AddFeedForward(layer.feed_forward_norm, layer.feed_forward_inner,
                   layer.feed_forward_outer, batch, x, normed,
                   work.hidden.data());
  }

  LayerNormRows(x, batch, d, weights_.final_norm.scale.data(),
                weights_.final_norm.shift.data(), weights_.epsilon, normed);
  torch::Tensor logits = at::empty({batch, weights_.vocabulary}, at::kFloat);
  weights_.generator.Apply(normed, batch, d, logits.data_ptr<float>(),
                           weights_.vocabulary, LinearEpilogue::kBias);
  for (int64_t r = 0; r < batch; ++r) ++position[r];
  return logits;  // [batch, target_vocab]
}

}  // namespace fanyi
