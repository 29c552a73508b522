// PackedTransformer's step against LibTorch's (TransformerImpl::DecodeStep with
// no kernel) on the same states, through everything a decoder does to them:
// rows joining with sources of other lengths, beams reordering, rows
// leaving, the cache growing; and whole decodes with the kernel installed.

#include "common/decoding/packed_transformer.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "common/decoding/decoder_selection.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/checkpoint.h"
#include "common/model/transformer.h"
#include "common/text/tokenizer.h"
#include "common/text/vocabulary.h"
#include "tests/random_model.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

// A random float32 model in eval mode, big enough that every product spans
// several of PackedLinear's tiles.
Transformer RandomModel(uint64_t seed, bool tied) {
  torch::manual_seed(seed);
  ModelConfig config;
  config.source_vocab_size = 41;
  config.target_vocab_size = 53;
  config.encoder_layers = 2;
  config.decoder_layers = 3;
  config.d_model = 64;
  config.d_ff = 96;
  config.heads = 4;
  config.dropout = 0.0;
  config.max_positions = 80;
  config.tie_target_embeddings = tied;
  Transformer model(config);
  model->eval();
  return model;
}

// Random source ids (no specials) of the given lengths.
std::vector<std::vector<int64_t>> RandomSources(
    const std::vector<int64_t>& lengths, int64_t vocabulary) {
  std::vector<std::vector<int64_t>> sources;
  for (int64_t length : lengths) {
    const torch::Tensor ids = at::randint(4, vocabulary, {length}, at::kLong);
    sources.emplace_back(ids.data_ptr<int64_t>(),
                         ids.data_ptr<int64_t>() + length);
  }
  return sources;
}

// Two identical states of `model` side by side, one stepped by LibTorch and
// one by the kernel; every step's logits are compared.
class SideBySide {
 public:
  // Logits may differ by `tolerance` × their largest magnitude.
  SideBySide(TransformerImpl& model, const PackedTransformer& kernel,
             float tolerance)
      : model_(model), kernel_(kernel), tolerance_(tolerance) {}

  // Rows for `sources` join both states (with `beams` rows each).
  void Join(const std::vector<std::vector<int64_t>>& sources, int64_t beams) {
    const torch::Tensor ids =
        MakeSourceTensor(sources, model_.config(), torch::kCPU);
    const torch::Tensor mask = PaddingMask(ids);
    const torch::Tensor memory = model_.Encode(ids, mask);
    std::vector<int64_t> rows;
    for (size_t s = 0; s < sources.size(); ++s) {
      for (int64_t b = 0; b < beams; ++b) rows.push_back(s);
    }
    const torch::Tensor expand = at::tensor(rows, at::kLong);
    reference_.Append(model_.StartDecoding(memory, mask, expand));
    packed_.Append(model_.StartDecoding(memory, mask, expand));
  }

  void Reorder(const std::vector<int64_t>& order) {
    reference_.ReorderRows(order);
    packed_.ReorderRows(order);
  }

  void Remove(const std::vector<int64_t>& rows) {
    reference_.RemoveRows(rows);
    packed_.RemoveRows(rows);
  }

  // One step with random tokens; the logits must agree.
  void Step(const std::string& where) {
    const int64_t vocabulary = model_.config().target_vocab_size;
    const torch::Tensor tokens =
        at::randint(0, vocabulary, {reference_.batch_size()}, at::kLong);
    const torch::Tensor expected = model_.DecodeStep(tokens, &reference_);
    const torch::Tensor actual = kernel_.Step(tokens, &packed_);
    ASSERT_EQ(actual.sizes(), expected.sizes()) << where;
    if (expected.numel() == 0) return;  // A step with no rows.
    const float scale = std::max(1.0f, expected.abs().max().item<float>());
    const float difference = (actual - expected).abs().max().item<float>();
    largest_difference_ = std::max(largest_difference_, difference / scale);
    EXPECT_LE(difference, tolerance_ * scale)
        << where << ": largest difference "
        << (actual - expected).abs().max().item<float>() << " of logits up to "
        << expected.abs().max().item<float>();
    EXPECT_TRUE(at::equal(packed_.positions, reference_.positions)) << where;
  }

  int64_t batch_size() const { return reference_.batch_size(); }
  // The largest difference seen, as a fraction of the logits' scale.
  float largest_difference() const { return largest_difference_; }

 private:
  TransformerImpl& model_;
  const PackedTransformer& kernel_;
  const float tolerance_;
  float largest_difference_ = 0;
  DecoderState reference_;
  DecoderState packed_;
};

// Steps through joins, reorders, removals and cache growth. float32 logits
// are within 1e-4 of the logits' scale (both sum in float32, in different
// orders, over products whose terms are far larger than a logit near 0);
// int8's within `int8_tolerance`.
void CompareThroughAScenario(TransformerImpl& model, CpuIsa isa,
                             ComputeType type = ComputeType::kFloat32,
                             float int8_tolerance = 0) {
  c10::InferenceMode inference;
  torch::manual_seed(7);
  ASSERT_EQ(model.inference_kernel(), nullptr);
  const PackedTransformer kernel(model, isa, type);
  const int64_t vocabulary = model.config().source_vocab_size;
  SideBySide states(model, kernel,
                    type == ComputeType::kInt8 ? int8_tolerance : 1e-4f);
  states.Join(RandomSources({3, 7, 1}, vocabulary), 1);
  const std::string name =
      ComputeTypeName(type) + " " + CpuIsaName(isa) + " step ";
  for (int step = 0; step < 40; ++step) {
    const std::string where = name + std::to_string(step);
    if (step == 4) states.Join(RandomSources({12, 2}, vocabulary), 1);
    if (step == 9) states.Reorder({1, 1, 0, 4, 3});  // Beams share a parent.
    if (step == 13) states.Join(RandomSources({5}, vocabulary), 4);  // Beams.
    if (step == 18) states.Remove({0, 6});
    if (step == 30) states.Reorder({});  // Every row leaves ...
    if (step == 31) states.Join(RandomSources({9, 4}, vocabulary), 2);  // ...
    states.Step(where);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(states.batch_size(), 0);
  std::cout << name << "largest difference " << states.largest_difference()
            << " of the logits' scale\n";
}

// The tiny trained model, trained once per process.
const std::string& TinyModelDir() {
  static const std::string* directory =
      new std::string(testing_util::TrainTinyModel(
          testing_util::MakeTempDir("packed_transformer_model")));
  return *directory;
}

std::vector<CpuIsa> SupportedIsas() {
  std::vector<CpuIsa> isas;
  for (CpuIsa isa : {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (CpuSupports(isa)) isas.push_back(isa);
  }
  return isas;
}

// The encoder output and the cross-attention keys and values of sources
// of unequal lengths (so with padding) equal LibTorch's.
void CompareEncoding(TransformerImpl& model, CpuIsa isa) {
  c10::InferenceMode inference;
  torch::manual_seed(8);
  const PackedTransformer kernel(model, isa);
  const int64_t vocabulary = model.config().source_vocab_size;
  for (const std::vector<int64_t>& lengths :
       std::vector<std::vector<int64_t>>{{1}, {6}, {3, 9, 1, 14}, {20, 20}}) {
    const torch::Tensor ids = MakeSourceTensor(
        RandomSources(lengths, vocabulary), ModelConfig(), torch::kCPU);
    const torch::Tensor mask = PaddingMask(ids);
    const std::string where = CpuIsaName(isa) + " sources of " +
                              std::to_string(lengths.front()) + "...";
    const torch::Tensor expected = model.Encode(ids, mask);
    const torch::Tensor memory = kernel.Encode(ids, mask);
    ASSERT_EQ(memory.sizes(), expected.sizes()) << where;
    EXPECT_TRUE(at::allclose(memory, expected, 1e-4, 1e-4))
        << where << ": largest difference "
        << (memory - expected).abs().max().item<float>();
    const DecoderState state = model.StartDecoding(expected, mask);
    const auto projected = kernel.MemoryKeysValues(expected);
    ASSERT_EQ(projected.size(), state.layers.size());
    for (size_t l = 0; l < projected.size(); ++l) {
      EXPECT_TRUE(at::allclose(projected[l].first, state.layers[l].memory_keys,
                               1e-4, 1e-4))
          << where << " layer " << l;
      EXPECT_TRUE(at::allclose(projected[l].second,
                               state.layers[l].memory_values, 1e-4, 1e-4))
          << where << " layer " << l;
    }
  }
}

TEST(PackedTransformerTest, EncodingEqualsLibTorchs) {
  Transformer model = RandomModel(31, true);
  Checkpoint checkpoint = LoadCheckpoint(TinyModelDir(), torch::kCPU);
  for (CpuIsa isa : SupportedIsas()) {
    CompareEncoding(*model, isa);
    CompareEncoding(*checkpoint.model, isa);
  }
}

TEST(PackedTransformerTest, LogitsEqualLibTorchsOnRandomModels) {
  for (bool tied : {true, false}) {
    Transformer model = RandomModel(21 + tied, tied);
    for (CpuIsa isa : SupportedIsas()) {
      SCOPED_TRACE(std::string("tied ") + (tied ? "yes" : "no"));
      CompareThroughAScenario(*model, isa);
    }
  }
}

// OpenNMT-py's models as Argos ships them share one embedding matrix
// between the encoder, the decoder and the generator, which has a bias.
TEST(PackedTransformerTest, LogitsEqualLibTorchsWithSharedEmbeddings) {
  torch::manual_seed(24);
  ModelConfig config = RandomModel(24, true)->config();
  config.target_vocab_size = config.source_vocab_size;
  config.share_embeddings = true;
  config.generator_bias = true;
  Transformer model(config);
  model->eval();
  {
    torch::NoGradGuard no_grad;
    model->named_parameters()["generator_bias"].normal_(0, 1);
  }
  for (CpuIsa isa : SupportedIsas()) CompareThroughAScenario(*model, isa);
}

TEST(PackedTransformerTest, LogitsEqualLibTorchsOnATrainedModel) {
  Checkpoint checkpoint = LoadCheckpoint(TinyModelDir(), torch::kCPU);
  for (CpuIsa isa : SupportedIsas()) {
    CompareThroughAScenario(*checkpoint.model, isa);
  }
}

// int8 products move the logits by a few percent of their scale (2% on the
// random model, 7% on the trained one when this was written), not more:
// quantization error, not a wrong layout or scale, which moves them by
// their whole scale.
TEST(PackedTransformerTest, Int8LogitsStayNearLibTorchs) {
  Transformer random = RandomModel(23, false);
  Checkpoint checkpoint = LoadCheckpoint(TinyModelDir(), torch::kCPU);
  for (CpuIsa isa : SupportedIsas()) {
    CompareThroughAScenario(*random, isa, ComputeType::kInt8, 0.15f);
    CompareThroughAScenario(*checkpoint.model, isa, ComputeType::kInt8, 0.15f);
  }
}

// Installed in the model, the kernel decodes what LibTorch decodes: greedy
// and beam search through the continuous decoder, on real sentences.
TEST(PackedTransformerTest, InstalledKernelDecodesTheSameTranslations) {
  Checkpoint checkpoint = LoadCheckpoint(TinyModelDir(), torch::kCPU);
  std::vector<EncodedSource> sources;
  std::ifstream corpus(testing_util::SharedDataPath("en-zh/train_mini.tsv"));
  std::string line;
  for (int i = 0; i < 40 && std::getline(corpus, line); ++i) {
    const std::vector<std::string> tokens =
        Tokenizer("en").Tokenize(line.substr(0, line.find('\t')));
    sources.push_back(
        {checkpoint.source_vocabulary.Encode(tokens), i % 2 == 0 ? 1 : 4});
  }
  c10::InferenceMode inference;
  TransformerImpl& model = *checkpoint.model;
  const DecodingOptions options;
  const auto expected =
      TargetIds(ContinuousDecoder(model, options).DecodeAll(sources));
  model.SetInferenceKernel(std::make_shared<PackedTransformer>(model));
  const auto actual =
      TargetIds(ContinuousDecoder(model, options).DecodeAll(sources));
  model.SetInferenceKernel(nullptr);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i], expected[i]) << "sentence " << i;
  }
  // int8 changes a few choices where two tokens were nearly tied.
  model.SetInferenceKernel(std::make_shared<PackedTransformer>(
      model, DetectedCpuIsa(), ComputeType::kInt8));
  const auto int8 =
      TargetIds(ContinuousDecoder(model, options).DecodeAll(sources));
  model.SetInferenceKernel(nullptr);
  size_t same = 0;
  for (size_t i = 0; i < expected.size(); ++i) same += int8[i] == expected[i];
  std::cout << "int8: " << same << " of " << expected.size()
            << " translations as float32's\n";
  EXPECT_GE(same, expected.size() * 3 / 4);
}

// Once the kernel holds the weights, the model's own are freed (as
// Translator::Load does): it decodes the same translations, and what would
// need the freed weights is refused.
TEST(PackedTransformerTest, ReleasedWeightsDecodeTheSameAndRefuseTheRest) {
  Checkpoint checkpoint = LoadCheckpoint(TinyModelDir(), torch::kCPU);
  TransformerImpl& model = *checkpoint.model;
  EXPECT_THROW(model.ReleaseWeights(), std::logic_error);  // No kernel.
  std::vector<EncodedSource> sources;
  for (int i = 0; i < 8; ++i) {
    sources.push_back({{5 + i, 6 + 2 * i, 7}, i % 2 == 0 ? 1 : 4});
  }
  model.SetInferenceKernel(std::make_shared<PackedTransformer>(model));
  const DecodingOptions options;
  const auto before = [&] {
    c10::InferenceMode inference;
    return TargetIds(ContinuousDecoder(model, options).DecodeAll(sources));
  }();
  model.ReleaseWeights();
  EXPECT_TRUE(model.weights_released());
  for (const torch::Tensor& parameter : model.parameters()) {
    EXPECT_EQ(parameter.numel(), 0);
  }
  {
    c10::InferenceMode inference;
    EXPECT_EQ(TargetIds(ContinuousDecoder(model, options).DecodeAll(sources)),
              before);
  }
  // LibTorch's own passes (autograd on) and another kernel need them.
  const torch::Tensor ids = torch::tensor({{5, 6, 7}}, torch::kLong);
  EXPECT_THROW(model.forward(ids, ids), std::logic_error);
  EXPECT_THROW(model.SetInferenceKernel(nullptr), std::logic_error);
  EXPECT_THROW(SelectDecoder(model, "libtorch", "float32"), std::logic_error);
}

TEST(PackedTransformerTest, RefusesBadTokensWithoutTouchingTheState) {
  c10::InferenceMode inference;
  Transformer model = RandomModel(5, true);
  const PackedTransformer kernel(*model);
  const torch::Tensor ids =
      MakeSourceTensor({{5, 6, 7}}, model->config(), torch::kCPU);
  const torch::Tensor mask = PaddingMask(ids);
  DecoderState state = model->StartDecoding(model->Encode(ids, mask), mask);
  kernel.Step(at::tensor({int64_t{Vocabulary::kBosId}}), &state);
  EXPECT_THROW(kernel.Step(at::tensor({int64_t{53}}), &state),
               std::out_of_range);
  EXPECT_THROW(kernel.Step(at::tensor({int64_t{-1}}), &state),
               std::out_of_range);
  EXPECT_THROW(kernel.Step(at::tensor({int64_t{4}, int64_t{5}}), &state),
               std::invalid_argument);
  EXPECT_EQ(state.columns(), 1);
  EXPECT_EQ(state.positions.item<int64_t>(), 1);
}

// A model with other layers (post-norm, GELU: models from elsewhere) is
// not packed: "packed" leaves it LibTorch's float32 step, and
// refuses int8, which only the packed decoder computes.
TEST(PackedTransformerTest, LeavesOtherLayersToLibTorchsStep) {
  torch::manual_seed(8);
  ModelConfig config = RandomModel(8, true)->config();
  config.pre_norm = false;
  config.activation = Activation::kGelu;
  Transformer model(config);
  model->eval();
  EXPECT_THROW(PackedTransformer{*model}, std::invalid_argument);
  SelectDecoder(*model, "packed", "float32");
  EXPECT_EQ(model->inference_kernel(), nullptr);
  EXPECT_THROW(SelectDecoder(*model, "packed", "int8"), std::invalid_argument);
}

TEST(PackedTransformerTest, RefusesModelsItCannotPack) {
  Transformer double_model = testing_util::RandomTinyModel(3);  // float64
  EXPECT_THROW(PackedTransformer{*double_model}, std::invalid_argument);
  Transformer training = RandomModel(4, true);
  training->train();
  EXPECT_THROW(PackedTransformer{*training}, std::invalid_argument);
  // By name: LibTorch's step has no int8; unknown names.
  Transformer model = RandomModel(6, true);
  EXPECT_THROW(SelectDecoder(*model, "libtorch", "int8"),
               std::invalid_argument);
  EXPECT_THROW(SelectDecoder(*model, "packed", "int4"), std::invalid_argument);
  EXPECT_THROW(SelectDecoder(*model, "onnx", "float32"), std::invalid_argument);
  EXPECT_EQ(model->inference_kernel(), nullptr);
  SelectDecoder(*model, "packed", "int8");
  EXPECT_NE(model->inference_kernel(), nullptr);
  SelectDecoder(*model, "libtorch", "float32");
  EXPECT_EQ(model->inference_kernel(), nullptr);
}

}  // namespace
}  // namespace fanyi
