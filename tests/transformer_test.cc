#include "common/model/transformer.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/dropout.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/decoding/greedy_decoder.h"
#include "common/model/encoder_layer.h"
#include "common/model/feed_forward.h"
#include "common/model/multi_head_attention.h"
#include "common/model/torch_compat.h"
#include "common/text/vocabulary.h"
#include "tests/random_model.h"

namespace fanyi {
namespace {

TEST(MaskTest, PaddingMaskMarksRealTokens) {
  torch::Tensor ids = PadRows({{5, 6, 7}, {8}}, torch::kCPU);
  torch::Tensor mask = PaddingMask(ids);  // [2, 1, 1, 3]
  ASSERT_EQ(mask.sizes(), (std::vector<int64_t>{2, 1, 1, 3}));
  EXPECT_TRUE(mask[0][0][0].all().item<bool>());
  EXPECT_TRUE(mask[1][0][0][0].item<bool>());
  EXPECT_FALSE(mask[1][0][0][1].item<bool>());
  EXPECT_FALSE(mask[1][0][0][2].item<bool>());
}

TEST(MaskTest, CausalMaskSeesOnlyThePast) {
  torch::Tensor mask = CausalMask(4, torch::kCPU);  // [1, 1, 4, 4]
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(mask[0][0][i][j].item<bool>(), j <= i) << i << "," << j;
    }
  }
}

TEST(AttentionTest, RowsSumToOneAndMaskedPositionsGetZeroWeight) {
  torch::manual_seed(3);
  torch::Tensor query = at::randn({2, 3, 5, 8});  // [batch, heads, q, d_k]
  torch::Tensor key = at::randn({2, 3, 6, 8});
  torch::Tensor value = at::randn({2, 3, 6, 8});
  // Row 1 has only 4 real keys.
  torch::Tensor mask = PaddingMask(PadRows({{4, 4, 4, 4, 4, 4}, {4, 4, 4, 4}},
                                           torch::kCPU));  // [2, 1, 1, 6]
  torch::nn::Dropout no_dropout(0.0);
  AttentionResult result =
      ScaledDotProductAttention(query, key, value, mask, no_dropout);
  ASSERT_EQ(result.weights.sizes(), (std::vector<int64_t>{2, 3, 5, 6}));
  EXPECT_TRUE(at::allclose(result.weights.sum(-1), at::ones({2, 3, 5})));
  EXPECT_EQ(result.weights[1].slice(-1, 4, 6).abs().max().item<float>(), 0.0f);
  EXPECT_GT(result.weights[0].slice(-1, 4, 6).min().item<float>(), 0.0f);
}

TEST(AttentionTest, FastPathEqualsTheReference) {
  torch::manual_seed(4);
  torch::Tensor query = at::randn({2, 3, 5, 8});  // [batch, heads, q, d_k]
  torch::Tensor key = at::randn({2, 3, 6, 8});
  torch::Tensor value = at::randn({2, 3, 6, 8});
  torch::Tensor mask = PaddingMask(PadRows({{4, 4, 4, 4, 4, 4}, {4, 4, 4}},
                                           torch::kCPU));  // [2, 1, 1, 6]
  torch::nn::Dropout no_dropout(0.0);
  AttentionResult reference =
      ScaledDotProductAttention(query, key, value, mask, no_dropout);
  torch::Tensor fast = compat::Attention(query / std::sqrt(8.0), key, value,
                                         AttentionBias(mask, at::kFloat), 0.0);
  EXPECT_TRUE(at::allclose(fast, reference.output, 1e-5, 1e-6));
}

TEST(AttentionTest, FusedInferenceProjectionsFollowTheParameters) {
  torch::manual_seed(5);
  MultiHeadAttention attention(16, 4, /*dropout=*/0.0);
  torch::Tensor x = at::randn({2, 3, 16});       // [batch, len, d_model]
  torch::Tensor memory = at::randn({2, 4, 16});  // [batch, kv_len, d_model]
  torch::Tensor bias = at::zeros({1, 1, 1, 1});
  auto separate = [&](const torch::Tensor& query, const torch::Tensor& kv) {
    attention->train();  // Training mode runs the separate projections.
    torch::Tensor output = attention->forward(query, kv, bias);
    attention->eval();
    return output;
  };
  auto fused = [&](const torch::Tensor& query, const torch::Tensor& kv) {
    c10::InferenceMode inference;  // Eval mode without autograd: fused.
    return attention->forward(query, kv, bias).clone();
  };
  attention->eval();
  EXPECT_TRUE(at::allclose(fused(x, x), separate(x, x), 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(fused(x, memory), separate(x, memory), 1e-5, 1e-6));
  // An in-place update (an optimizer step, loaded weights) must reach the
  // fused matrix, which was built before it.
  torch::Tensor before = fused(x, x);
  {
    torch::NoGradGuard no_grad;
    for (auto& parameter : attention->named_parameters()) {
      if (parameter.key().rfind("value_projection", 0) == 0) {
        parameter.value().add_(0.5);
      }
    }
  }
  torch::Tensor after = fused(x, x);
  EXPECT_FALSE(at::allclose(after, before, 1e-3, 1e-3));
  EXPECT_TRUE(at::allclose(after, separate(x, x), 1e-5, 1e-6));
}

TEST(PositionalEncodingTest, MatchesThePaperFormula) {
  torch::Tensor table = SinusoidalPositions(50, 16);  // [50, 16]
  ASSERT_EQ(table.sizes(), (std::vector<int64_t>{50, 16}));
  for (int pos : {0, 1, 7, 49}) {
    for (int i = 0; i < 8; ++i) {
      const double angle = pos / std::pow(10000.0, 2.0 * i / 16);
      EXPECT_NEAR(table[pos][2 * i].item<float>(), std::sin(angle), 1e-5);
      EXPECT_NEAR(table[pos][2 * i + 1].item<float>(), std::cos(angle), 1e-5);
    }
  }
}

TEST(TransformerTest, ForwardShape) {
  Transformer model = testing_util::RandomTinyModel(1);
  torch::Tensor source = at::randint(4, 23, {3, 7});
  torch::Tensor target = at::randint(4, 19, {3, 5});
  EXPECT_EQ(model->forward(source, target).sizes(),
            (std::vector<int64_t>{3, 5, 19}));
}

// Three sources of different lengths in one padded batch.
torch::Tensor ThreeSources() {
  return MakeSourceTensor({{5, 6, 7, 8, 9}, {10, 11}, {12, 13, 14}},
                          ModelConfig(), torch::kCPU);
}

// Decodes `target` [batch, len] step by step over `source`, expecting each
// step's logits to be the full pass's and every row at position len after;
// returns the full pass's logits, [batch, len, vocab].
torch::Tensor ExpectStepsEqualFullPass(Transformer& model,
                                       const torch::Tensor& source,
                                       const torch::Tensor& target) {
  torch::Tensor source_mask = PaddingMask(source);
  torch::Tensor memory = model->Encode(source, source_mask);
  torch::Tensor full =
      model->Generate(model->DecodeFull(target, memory, source_mask));
  DecoderState state = model->StartDecoding(memory, source_mask);
  const int64_t length = target.size(1);
  for (int64_t t = 0; t < length; ++t) {
    torch::Tensor step = model->DecodeStep(target.select(1, t), &state);
    EXPECT_TRUE(at::allclose(step, full.select(1, t), 1e-9, 1e-9))
        << "step " << t;
  }
  EXPECT_TRUE(state.positions.eq(length).all().item<bool>());
  return full;
}

TEST(TransformerTest, CachedStepsEqualFullRecompute) {
  for (bool tied : {true, false}) {
    SCOPED_TRACE(tied ? "tied" : "untied");
    Transformer model = testing_util::RandomTinyModel(7, tied);
    ExpectStepsEqualFullPass(model, ThreeSources(), at::randint(4, 19, {3, 6}));
  }
}

// RandomTinyModel's shape with the layer variants of models from elsewhere.
Transformer VariantModel(uint64_t seed,
                         const std::function<void(ModelConfig&)>& variant) {
  ModelConfig config = testing_util::RandomTinyModel(seed)->config();
  config.target_vocab_size = config.source_vocab_size;  // For sharing.
  variant(config);
  torch::manual_seed(seed);
  Transformer model(config);
  model->to(at::kDouble);
  model->eval();
  // Norms start at 1 and 0 and biases at 0: random values so that
  // swapping one for another would show.
  torch::NoGradGuard no_grad;
  for (auto& parameter : model->named_parameters()) {
    if (parameter.value().dim() == 1) {
      parameter.value().copy_(at::randn_like(parameter.value()));
    }
  }
  return model;
}

const std::vector<std::pair<std::string, std::function<void(ModelConfig&)>>>&
Variants() {
  static const auto* variants = new std::vector<
      std::pair<std::string, std::function<void(ModelConfig&)>>>{
      {"post-norm, GELU",
       [](ModelConfig& c) {
         c.pre_norm = false;
         c.final_norms = false;
         c.activation = Activation::kGelu;
       }},
      {"unscaled embeddings with their norms, GELU (tanh)",
       [](ModelConfig& c) {
         c.scale_embeddings = false;
         c.embedding_norms = true;
         c.activation = Activation::kGeluTanh;
       }},
      {"shared embeddings, a generator bias, Swish",
       [](ModelConfig& c) {
         c.share_embeddings = true;
         c.generator_bias = true;
         c.activation = Activation::kSwish;
       }},
  };
  return *variants;
}

// Every variant decodes step by step what it computes over the whole
// prefix, and computes something else than fanyi's own layers.
TEST(TransformerTest, LayerVariantsStepAsTheyComputeInFull) {
  torch::Tensor source = ThreeSources();
  torch::Tensor target = at::randint(4, 19, {3, 6});
  Transformer plain = VariantModel(7, [](ModelConfig&) {});
  const torch::Tensor plain_logits = plain->forward(source, target);
  for (const auto& [name, variant] : Variants()) {
    SCOPED_TRACE(name);
    Transformer model = VariantModel(7, variant);
    const torch::Tensor full = ExpectStepsEqualFullPass(model, source, target);
    EXPECT_FALSE(at::allclose(full, plain_logits, 1e-3, 1e-3));
  }
}

// A post-norm encoder layer is norm(x + f(x)) around each sublayer, with
// the layer's own modules.
TEST(TransformerTest, PostNormWrapsEachSublayerAfterItsResidual) {
  Transformer model =
      VariantModel(3, [](ModelConfig& c) { c.pre_norm = false; });
  auto layer =
      model->named_modules()["encoder_layers.0"]->as<EncoderLayerImpl>();
  auto children = layer->named_children();
  auto& attention = *children["self_attention"]->as<MultiHeadAttentionImpl>();
  auto& feed_forward = *children["feed_forward"]->as<FeedForwardImpl>();
  auto& attention_norm =
      *children["attention_norm"]->as<torch::nn::LayerNormImpl>();
  auto& feed_forward_norm =
      *children["feed_forward_norm"]->as<torch::nn::LayerNormImpl>();
  torch::Tensor x = at::randn({2, 4, 16}, at::kDouble);
  torch::Tensor bias = at::zeros({2, 1, 1, 4}, at::kDouble);
  torch::Tensor h = attention_norm.forward(x + attention.forward(x, x, bias));
  torch::Tensor expected =
      feed_forward_norm.forward(h + feed_forward.forward(h));
  EXPECT_TRUE(at::allclose(layer->forward(x, bias), expected, 1e-12, 1e-12));
}

TEST(GreedyDecodeTest, BatchedCachedDecodingEqualsReferenceDecoder) {
  for (uint64_t seed : {11, 12, 13}) {
    Transformer model = testing_util::RandomTinyModel(seed);
    std::vector<std::vector<int64_t>> sources = {
        {5, 6, 7, 8, 9, 10, 11},
        {12},
        {13, 14, 15},
        {16, 17, 18, 19, 20, 21, 22, 4, 5, 6, 7, 8}};
    DecodingOptions options;
    options.max_length = 20;
    options.length_ratio = 1.5;
    options.length_offset = 3;
    const auto batched = GreedyDecode(*model, sources, options);
    ASSERT_EQ(batched.size(), sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      EXPECT_EQ(batched[i],
                GreedyDecodeWithoutCache(*model, sources[i], options))
          << "seed " << seed << " row " << i;
      // Decoding on past </s>, as the tutorials do, changes nothing before it.
      EXPECT_EQ(batched[i],
                GreedyDecodeWithoutCache(*model, sources[i], options,
                                         /*run_all_steps=*/true))
          << "seed " << seed << " row " << i;
      EXPECT_LE(static_cast<int64_t>(batched[i].size()),
                MaxTargetLength(options, sources[i].size()));
    }
  }
}

TEST(GreedyDecodeTest, MaxTargetLength) {
  DecodingOptions options;
  options.max_length = 30;
  options.length_ratio = 2.0;
  options.length_offset = 5;
  EXPECT_EQ(MaxTargetLength(options, 3), 11);
  EXPECT_EQ(MaxTargetLength(options, 100), 30);
}

}  // namespace
}  // namespace fanyi
