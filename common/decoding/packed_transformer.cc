#include "common/decoding/packed_transformer.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/decoding/cpu_isa.h"
#include "common/decoding/vector_math.h"

namespace fanyi {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

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

// a·b over `size` floats, in eight partial sums the compiler vectorizes.
inline float Dot(const float* a, const float* b, int64_t size) {
  constexpr int kLanes = 8;
  float partial[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= size; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      partial[lane] += a[i + lane] * b[i + lane];
    }
  }
  float sum = 0;
  for (int lane = 0; lane < kLanes; ++lane) sum += partial[lane];
  for (; i < size; ++i) sum += a[i] * b[i];
  return sum;
}

// Σ (row[i] - center)² over `size` floats (Σ row[i] when `squared` is
// false, center 0), in sixteen partial sums: one sum would be a chain of
// dependent additions, four cycles each, which the compiler may not
// reorder.
inline float RowSum(const float* row, int64_t size, float center,
                    bool squared) {
  constexpr int kLanes = 16;
  float partial[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= size; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const float x = row[i + lane] - center;
      partial[lane] += squared ? x * x : x;
    }
  }
  float sum = 0;
  for (int lane = 0; lane < kLanes; ++lane) sum += partial[lane];
  for (; i < size; ++i) {
    const float x = row[i] - center;
    sum += squared ? x * x : x;
  }
  return sum;
}

// out[r] = (x[r] - mean) / sqrt(variance + epsilon) * scale + shift, for
// `rows` rows of `size` floats.
FANYI_CPU_CLONES void LayerNormRows(const float* x, int64_t rows, int64_t size,
                                    const float* scale, const float* shift,
                                    float epsilon, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * size;
    const float mean = RowSum(row, size, 0, false) / size;
    const float squares = RowSum(row, size, mean, true);
    const float inverse = 1.0f / std::sqrt(squares / size + epsilon);
    float* result = out + r * size;
    for (int64_t i = 0; i < size; ++i) {
      result[i] = (row[i] - mean) * inverse * scale[i] + shift[i];
    }
  }
}

// out[0, 16·kVectors) = Σ over columns c of scores[c] · inverse · the
// value at values + offsets[c], skipping columns whose score is exactly 0
// (masked: their values may be stale and are never read). The sums stay in
// registers, in two sets, for even and odd columns: each set is a chain of
// dependent additions (four cycles each), and with two sets of kVectors
// the core runs 2·kVectors chains at once where one column at a time and
// sixteen outputs at a time ran one.
// (Always inlined: compiled apart, it would not get the clones' vector
// instructions.)
template <int kVectors>
__attribute__((always_inline)) inline void AddWeighted(
    float weight, const float* value, Floats16 (&sums)[kVectors]) {
  for (int k = 0; k < kVectors; ++k) {
    Floats16 part;
    std::memcpy(&part, value + 16 * k, sizeof part);
    sums[k] += weight * part;
  }
}

template <int kVectors>
__attribute__((always_inline)) inline void WeightedValues(
    const float* scores, float inverse, const float* values,
    const int64_t* offsets, int64_t length, float* out) {
  Floats16 even[kVectors] = {};
  Floats16 odd[kVectors] = {};
  int64_t c = 0;
  for (; c + 2 <= length; c += 2) {
    if (scores[c] != 0) {
      AddWeighted(scores[c] * inverse, values + offsets[c], even);
    }
    if (scores[c + 1] != 0) {
      AddWeighted(scores[c + 1] * inverse, values + offsets[c + 1], odd);
    }
  }
  if (c < length && scores[c] != 0) {
    AddWeighted(scores[c] * inverse, values + offsets[c], even);
  }
  for (int k = 0; k < kVectors; ++k) {
    const Floats16 sum = even[k] + odd[k];
    std::memcpy(out + 16 * k, &sum, sizeof sum);
  }
}

// One head of one row attending over `length` columns: column c's key and
// value start `offsets[c]` floats into `keys` and `values`, and its bias is
// `bias[c]`. A column with -inf bias gets exactly zero weight and its key
// and value are never read (they may be stale cache entries). `query` is
// already scaled. A row with no column to attend to gets zeros. Leaves
// scores[c] · (the returned factor) as column c's attention weight; the
// factor is 0 for a row with no column.
FANYI_CPU_CLONES float AttendHead(const float* query, const float* keys,
                                  const float* values, const int64_t* offsets,
                                  const float* bias, int64_t length,
                                  int64_t d_k, float* scores, float* out) {
  float largest = kMinusInfinity;
  for (int64_t c = 0; c < length; ++c) {
    if (bias[c] == kMinusInfinity) {
      scores[c] = kMinusInfinity;
      continue;
    }
    scores[c] = Dot(query, keys + offsets[c], d_k) + bias[c];
    largest = std::max(largest, scores[c]);
  }
  std::fill(out, out + d_k, 0.0f);
  if (largest == kMinusInfinity) return 0;
  float total = 0;
  for (int64_t c = 0; c < length; ++c) {
    scores[c] = ExpOfNonPositive(scores[c] - largest);
  }
  for (int64_t c = 0; c < length; ++c) total += scores[c];
  const float inverse = 1.0f / total;
  // Up to 64 outputs at a time, summed in registers, then the rest one by
  // one.
  int64_t d = 0;
  for (; d + 64 <= d_k; d += 64) {
    WeightedValues<4>(scores, inverse, values + d, offsets, length, out + d);
  }
  switch ((d_k - d) / 16) {
    case 3:
      WeightedValues<3>(scores, inverse, values + d, offsets, length, out + d);
      break;
    case 2:
      WeightedValues<2>(scores, inverse, values + d, offsets, length, out + d);
      break;
    case 1:
      WeightedValues<1>(scores, inverse, values + d, offsets, length, out + d);
      break;
  }
  d += (d_k - d) / 16 * 16;
  for (; d < d_k; ++d) {
    for (int64_t c = 0; c < length; ++c) {
      if (scores[c] == 0) continue;
      out[d] += scores[c] * inverse * values[offsets[c] + d];
    }
  }
  return inverse;
}

// Asks the core to start loading what one row's attention will read: for
// each of `heads` heads (`head_stride` floats apart), the d_k floats at
// keys and values + offsets[c] of every column c not masked by its bias.
// A row's cache entries lie scattered over the cache rows its beam's
// ancestors wrote, where the hardware prefetcher cannot guess them; asked
// for one row ahead, they arrive while the row before computes.
inline void PrefetchColumns(const float* keys, const float* values,
                            int64_t head_stride, int64_t heads,
                            const int64_t* offsets, const float* bias,
                            int64_t length, int64_t d_k) {
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t c = 0; c < length; ++c) {
      if (bias[c] == kMinusInfinity) continue;
      const float* key = keys + h * head_stride + offsets[c];
      const float* value = values + h * head_stride + offsets[c];
      for (int64_t i = 0; i < d_k; i += 16) {
        __builtin_prefetch(key + i);
        __builtin_prefetch(value + i);
      }
    }
  }
}

// What a pass computes, kept per thread between passes so that they do not
// allocate once the largest batch has been seen.
struct Workspace {
  std::vector<float> x;            // [rows, d_model]: the residual stream.
  std::vector<float> normed;       // [rows, d_model]
  std::vector<float> projected;    // [rows, 3 * d_model]
  std::vector<float> attended;     // [rows, d_model]
  std::vector<float> hidden;       // [rows, d_ff]
  std::vector<float> scores;       // [columns]
  std::vector<float> column_bias;  // [columns]
  std::vector<int64_t> offsets;    // [columns]
  // The next row's, fetched ahead.
  std::vector<float> next_bias;       // [columns]
  std::vector<int64_t> next_offsets;  // [columns]

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
    Grow(workspace.scores, columns);
    Grow(workspace.column_bias, columns);
    Grow(workspace.offsets, columns);
    Grow(workspace.next_bias, columns);
    Grow(workspace.next_offsets, columns);
    return workspace;
  }

 private:
  template <typename T>
  static void Grow(std::vector<T>& buffer, int64_t size) {
    if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(size);
  }
};

// Attention of `rows` rows, head by head, each over `length` columns:
// `columns(r, bias, offsets)` lays out row r's (AttendHead's bias and
// offsets into `keys` and `values`, whose heads are `head_stride` floats
// apart); row r's queries start at queries + r · query_stride, its outputs
// at out + r · heads · d_k. Row r + 1's columns are laid out and fetched
// ahead while row r attends, unless `reads_the_same(r)` says it reads what
// row r did. With `alignment` [rows, length], the attention weights of the
// first `alignment_heads` heads are averaged into it (zeroed beforehand).
template <typename Columns, typename ReadsTheSame>
void AttendRows(const float* queries, int64_t query_stride, const float* keys,
                const float* values, int64_t head_stride, int64_t rows,
                int64_t length, int64_t heads, int64_t d_k,
                const Columns& columns, const ReadsTheSame& reads_the_same,
                Workspace& work, float* out, float* alignment = nullptr,
                int64_t alignment_heads = 0) {
  if (rows == 0) return;
  columns(0, work.column_bias.data(), work.offsets.data());
  for (int64_t r = 0; r < rows; ++r) {
    if (r + 1 < rows) {
      columns(r + 1, work.next_bias.data(), work.next_offsets.data());
      if (!reads_the_same(r)) {
        PrefetchColumns(keys, values, head_stride, heads,
                        work.next_offsets.data(), work.next_bias.data(), length,
                        d_k);
      }
    }
    for (int64_t h = 0; h < heads; ++h) {
      const float factor =
          AttendHead(queries + r * query_stride + h * d_k,
                     keys + h * head_stride, values + h * head_stride,
                     work.offsets.data(), work.column_bias.data(), length, d_k,
                     work.scores.data(), out + (r * heads + h) * d_k);
      // A row with no column to attend to (factor 0) adds nothing.
      if (alignment != nullptr && h < alignment_heads && factor > 0) {
        const float weight = factor / static_cast<float>(alignment_heads);
        for (int64_t c = 0; c < length; ++c) {
          alignment[r * length + c] += work.scores[c] * weight;
        }
      }
    }
    work.column_bias.swap(work.next_bias);
    work.offsets.swap(work.next_offsets);
  }
}

}  // namespace

PackedTransformer::PackedTransformer(TransformerImpl& model, CpuIsa isa,
                                     ComputeType compute_type) {
  const ModelConfig& config = model.config();
  if (!Computes(config)) {
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
  c10::InferenceMode inference;
  const Parameters tensors = NamedTensors(model);
  d_model_ = config.d_model;
  heads_ = config.heads;
  d_k_ = d_model_ / heads_;
  d_ff_ = config.d_ff;
  source_vocabulary_ = config.source_vocab_size;
  vocabulary_ = config.target_vocab_size;
  max_positions_ = config.max_positions;
  alignment_layer_ = config.AlignmentLayer();
  alignment_heads_ = config.AlignmentHeads();
  embedding_scale_ = static_cast<float>(std::sqrt(double(d_model_)));
  epsilon_ = static_cast<float>(config.layer_norm_epsilon);
  const torch::Tensor& embedding =
      Find(tensors, config.share_embeddings ? "source_embedding.weight"
                                            : "target_embedding.weight");
  embedding_ = Floats(embedding);
  positions_ = Floats(Find(tensors, "positions"));
  auto norm = [&](const std::string& name) {
    return Norm{Floats(Find(tensors, name + ".weight")),
                Floats(Find(tensors, name + ".bias"))};
  };
  auto linear = [&](const std::string& name) {
    return PackedLinear(Find(tensors, name + ".weight"),
                        Find(tensors, name + ".bias"), isa, compute_type);
  };
  const double scale = 1.0 / std::sqrt(double(d_k_));
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
    source_embedding_ = Floats(Find(tensors, "source_embedding.weight"));
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
    encoder_layers_.push_back(std::move(layer));
  }
  encoder_norm_ = norm("encoder_norm");
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
    layers_.push_back(std::move(layer));
  }
  final_norm_ = norm("decoder_norm");
  generator_ =
      config.tie_target_embeddings
          ? PackedLinear(embedding,
                         config.generator_bias ? Find(tensors, "generator_bias")
                                               : torch::Tensor(),
                         isa, compute_type)
          : linear("generator");
}

bool PackedTransformer::Computes(const ModelConfig& config) {
  return config.pre_norm && config.activation == Activation::kRelu &&
         config.scale_embeddings && config.final_norms &&
         !config.embedding_norms;
}

void PackedTransformer::Normalize(const Norm& norm, const float* x,
                                  int64_t rows, float* out) const {
  LayerNormRows(x, rows, d_model_, norm.scale.data(), norm.shift.data(),
                epsilon_, out);
}

void PackedTransformer::AddFeedForward(const Norm& norm,
                                       const PackedLinear& inner,
                                       const PackedLinear& outer, int64_t rows,
                                       float* x, float* normed,
                                       float* hidden) const {
  Normalize(norm, x, rows, normed);
  inner.Apply(normed, rows, d_model_, hidden, d_ff_, LinearEpilogue::kBiasRelu);
  outer.Apply(hidden, rows, d_ff_, x, d_model_, LinearEpilogue::kAddToOutput);
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
  const int64_t d = d_model_;
  if (length > max_positions_) {
    throw std::out_of_range("sequence of " + std::to_string(length) +
                            " tokens exceeds the model's max_positions " +
                            std::to_string(max_positions_));
  }
  const torch::Tensor ids = source_ids.contiguous();
  const torch::Tensor mask = source_mask.contiguous();
  const int64_t* id = ids.data_ptr<int64_t>();
  const bool* attends = mask.data_ptr<bool>();
  for (int64_t i = 0; i < rows; ++i) {
    if (id[i] < 0 || id[i] >= source_vocabulary_) {
      throw std::out_of_range("token " + std::to_string(id[i]) +
                              " is outside the source vocabulary of " +
                              std::to_string(source_vocabulary_));
    }
  }
  Workspace& work = Workspace::ForThisThread(rows, d, d_ff_, length);
  float* x = work.x.data();
  float* normed = work.normed.data();
  float* projected = work.projected.data();
  float* attended = work.attended.data();

  // [batch * len, d_model]: scaled embeddings plus positions.
  for (int64_t i = 0; i < rows; ++i) {
    const float* embedding =
        (source_embedding_.empty() ? embedding_ : source_embedding_).data() +
        id[i] * d;
    const float* table = positions_.data() + (i % length) * d;
    for (int64_t j = 0; j < d; ++j) {
      x[i * d + j] = embedding[j] * embedding_scale_ + table[j];
    }
  }
  for (const EncoderLayer& layer : encoder_layers_) {
    Normalize(layer.attention_norm, x, rows, normed);
    // [batch * len, 3 * d_model]: queries, keys, values.
    layer.projections.Apply(normed, rows, d, projected, 3 * d,
                            LinearEpilogue::kBias);
    for (int64_t b = 0; b < batch; ++b) {
      // Position j of sentence b: its keys and values, and whether it is a
      // real token (padding gets -inf).
      for (int64_t j = 0; j < length; ++j) {
        work.offsets[j] = (b * length + j) * 3 * d;
        work.column_bias[j] = attends[b * length + j] ? 0.0f : kMinusInfinity;
      }
      for (int64_t i = b * length; i < (b + 1) * length; ++i) {
        for (int64_t h = 0; h < heads_; ++h) {
          AttendHead(projected + i * 3 * d + h * d_k_, projected + d + h * d_k_,
                     projected + 2 * d + h * d_k_, work.offsets.data(),
                     work.column_bias.data(), length, d_k_, work.scores.data(),
                     attended + i * d + h * d_k_);
        }
      }
    }
    layer.output.Apply(attended, rows, d, x, d, LinearEpilogue::kAddToOutput);
    AddFeedForward(layer.feed_forward_norm, layer.feed_forward_inner,
                   layer.feed_forward_outer, rows, x, normed,
                   work.hidden.data());
  }
  torch::Tensor memory = at::empty({batch, length, d}, at::kFloat);
  Normalize(encoder_norm_, x, rows, memory.data_ptr<float>());
  return memory;  // [batch, src_len, d_model]
}

std::vector<std::pair<torch::Tensor, torch::Tensor>>
PackedTransformer::MemoryKeysValues(const torch::Tensor& memory) const {
  if (memory.dim() != 3 || memory.scalar_type() != at::kFloat ||
      !memory.device().is_cpu() || memory.size(2) != d_model_) {
    throw std::invalid_argument(
        "PackedTransformer: memory must be float32 CPU [sources, len, " +
        std::to_string(d_model_) + "]");
  }
  const torch::Tensor rows_in = memory.contiguous();
  const int64_t sources = memory.size(0);
  const int64_t length = memory.size(1);
  const int64_t rows = sources * length;
  const int64_t d = d_model_;
  Workspace& work = Workspace::ForThisThread(rows, d, d_ff_, 0);
  float* projected = work.projected.data();
  std::vector<std::pair<torch::Tensor, torch::Tensor>> result;
  for (const Layer& layer : layers_) {
    // [sources * len, 2 * d_model] -> keys and values, each [sources,
    // heads, len, d_k].
    layer.cross_keys_values.Apply(rows_in.data_ptr<float>(), rows, d, projected,
                                  2 * d, LinearEpilogue::kBias);
    torch::Tensor keys = at::empty({sources, heads_, length, d_k_}, at::kFloat);
    torch::Tensor values = at::empty_like(keys);
    float* key = keys.data_ptr<float>();
    float* value = values.data_ptr<float>();
    for (int64_t s = 0; s < sources; ++s) {
      for (int64_t h = 0; h < heads_; ++h) {
        for (int64_t j = 0; j < length; ++j) {
          const float* row = projected + (s * length + j) * 2 * d + h * d_k_;
          const int64_t at = ((s * heads_ + h) * length + j) * d_k_;
          std::copy_n(row, d_k_, key + at);
          std::copy_n(row + d, d_k_, value + at);
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
    if (token[r] < 0 || token[r] >= vocabulary_) {
      throw std::out_of_range("token " + std::to_string(token[r]) +
                              " is outside the target vocabulary of " +
                              std::to_string(vocabulary_));
    }
    if (position[r] >= max_positions_) {
      throw std::out_of_range("row " + std::to_string(r) +
                              " is past the model's max_positions " +
                              std::to_string(max_positions_));
    }
  }
  state->alignment = torch::Tensor();
  const int64_t column = state->AddColumn();
  const int64_t first_column = state->first_column;
  const int64_t columns = column + 1 - first_column;
  const int64_t source_length = state->source_bias.size(3);
  const int64_t d = d_model_;

  Workspace& work = Workspace::ForThisThread(batch, d, d_ff_,
                                             std::max(columns, source_length));
  float* x = work.x.data();
  float* normed = work.normed.data();
  float* projected = work.projected.data();
  float* attended = work.attended.data();

  // [batch, d_model]: scaled embeddings plus each row's own position.
  for (int64_t r = 0; r < batch; ++r) {
    const float* embedding = embedding_.data() + token[r] * d;
    const float* table = positions_.data() + position[r] * d;
    for (int64_t i = 0; i < d; ++i) {
      x[r * d + i] = embedding[i] * embedding_scale_ + table[i];
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

  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
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
      for (int64_t h = 0; h < heads_; ++h) {
        const int64_t at = r * cache_strides[0] + h * cache_strides[1] +
                           column * cache_strides[2];
        std::copy_n(projected + r * 3 * d + d + h * d_k_, d_k_, keys + at);
        std::copy_n(projected + r * 3 * d + 2 * d + h * d_k_, d_k_,
                    values + at);
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
        heads_, d_k_, self_columns, [](int64_t) { return false; }, work,
        attended);
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
    const bool aligns =
        state->wants_alignment && static_cast<int64_t>(l) == alignment_layer_;
    if (aligns) {
      state->alignment = at::zeros({batch, source_length}, at::kFloat);
    }
    AttendRows(projected, d, memory_keys, memory_values, memory_strides[1],
               batch, source_length, heads_, d_k_, source_columns, same_source,
               work, attended,
               aligns ? state->alignment.data_ptr<float>() : nullptr,
               alignment_heads_);
    layer.cross_output.Apply(attended, batch, d, x, d,
                             LinearEpilogue::kAddToOutput);

    // Feed-forward.
    AddFeedForward(layer.feed_forward_norm, layer.feed_forward_inner,
                   layer.feed_forward_outer, batch, x, normed,
                   work.hidden.data());
  }

  LayerNormRows(x, batch, d, final_norm_.scale.data(), final_norm_.shift.data(),
                epsilon_, normed);
  torch::Tensor logits = at::empty({batch, vocabulary_}, at::kFloat);
  generator_.Apply(normed, batch, d, logits.data_ptr<float>(), vocabulary_,
                   LinearEpilogue::kBias);
  for (int64_t r = 0; r < batch; ++r) ++position[r];
  return logits;  // [batch, target_vocab]
}

void SelectDecoder(TransformerImpl& model, const std::string& cpu_decoder,
                   const std::string& compute_type) {
  if (cpu_decoder != "packed" && cpu_decoder != "libtorch") {
    throw std::invalid_argument("cpu_decoder is \"" + cpu_decoder +
                                "\"; use packed or libtorch");
  }
  const bool on_cpu = model.parameters().front().device().is_cpu();
  if (compute_type == "float16" || compute_type == "bfloat16") {
    const bool half = compute_type == "float16";
    if (on_cpu && (half || cpu_decoder == "packed")) {
      throw std::invalid_argument(
          "compute_type " + compute_type +
          (half ? " needs a GPU" : " on the CPU needs the libtorch decoder") +
          "; the packed CPU decoder computes in int8 or float32");
    }
    model.SetInferenceKernel(nullptr);
    model.to(half ? at::kHalf : at::kBFloat16);
    return;
  }
  if (compute_type != "float32" && compute_type != "int8") {
    throw std::invalid_argument("unknown compute type '" + compute_type +
                                "'; use int8, float32, float16 or bfloat16");
  }
  const ComputeType type = ParseComputeType(compute_type);
  if (model.parameters().front().scalar_type() != at::kFloat) {
    model.to(at::kFloat);
  }
  if (!on_cpu) return;  // A GPU has no int8 step: float32 there.
  if (cpu_decoder == "libtorch") {
    if (type != ComputeType::kFloat32) {
      throw std::invalid_argument(
          "compute_type " + compute_type +
          " needs the packed CPU decoder; the libtorch one computes in "
          "float32 or bfloat16");
    }
    model.SetInferenceKernel(nullptr);
  } else if (!PackedTransformer::Computes(model.config())) {
    // Models from elsewhere with other layers run LibTorch's step.
    if (type != ComputeType::kFloat32) {
      throw std::invalid_argument(
          "compute_type " + compute_type +
          " needs the packed CPU decoder, which does not compute this "
          "model's layers; they run in float32 (compute_type float32)");
    }
    model.SetInferenceKernel(nullptr);
  } else {
    model.SetInferenceKernel(
        std::make_shared<PackedTransformer>(model, DetectedCpuIsa(), type));
  }
}

}  // namespace fanyi
