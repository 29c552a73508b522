// What takes a device, on each device this machine has: the CPU always, and
// CUDA when LibTorch sees a GPU. CI has no GPU, so there only the CPU cases
// run; docs/benchmarks.md's GPU section records a run on one.

#include "common/model/device.h"

#include <ATen/ops/argmax.h>
#include <ATen/ops/full.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/decoding/beam_search.h"
#include "common/decoding/continuous_decoder.h"
#include "common/decoding/decoder_selection.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/checkpoint.h"
#include "common/model/multi_head_attention.h"
#include "common/model/step_graphs.h"
#include "common/model/torch_compat.h"
#include "common/pipeline/translator.h"
#include "common/text/vocabulary.h"
#include "tests/random_model.h"
#include "tests/server_process.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"
#include "trainer/trainer.h"

namespace fanyi {
namespace {

// ‖actual − expected‖ / ‖expected‖, in float64 on the CPU.
double RelativeError(const torch::Tensor& actual,
                     const torch::Tensor& expected) {
  const torch::Tensor reference = expected.to(torch::kCPU, torch::kDouble);
  return (actual.to(torch::kCPU, torch::kDouble) - reference)
             .norm()
             .item<double>() /
         reference.norm().item<double>();
}

class DeviceTest : public ::testing::TestWithParam<std::string> {
 protected:
  torch::Device device() const { return ResolveDevice(GetParam()); }
};

// compat::Attention is scaled_dot_product_attention on LibTorch 2.x (a fused
// kernel on a GPU) and batched products on 1.13: against softmax(q·kᵀ +
// bias)·v in float64, with a padding bias and a causal one.
TEST_P(DeviceTest, AttentionMatchesAFloat64Reference) {
  torch::manual_seed(21);
  // [batch, heads, length, d_k]; the query comes scaled, as the model's does.
  const torch::Tensor query = at::randn({2, 4, 6, 16}) / 4;
  const torch::Tensor key = at::randn({2, 4, 6, 16});
  const torch::Tensor value = at::randn({2, 4, 6, 16});
  // Row 1 has four real keys; causally each query sees the keys up to it.
  const torch::Tensor padding =
      PaddingMask(PadRows({{4, 4, 4, 4, 4, 4}, {4, 4, 4, 4}}, torch::kCPU));
  const torch::Tensor causal = padding.logical_and(CausalMask(6, torch::kCPU));
  for (const auto& [name, mask] :
       {std::pair{"padding", padding}, std::pair{"causal", causal}}) {
    const torch::Tensor bias = AttentionBias(mask, at::kFloat);
    const torch::Tensor expected = at::matmul(
        at::softmax(at::matmul(query.to(torch::kDouble),
                               key.to(torch::kDouble).transpose(-2, -1)) +
                        bias.to(torch::kDouble),
                    -1),
        value.to(torch::kDouble));
    const torch::Tensor actual =
        compat::Attention(query.to(device()), key.to(device()),
                          value.to(device()), bias.to(device()), 0.0);
    ASSERT_EQ(actual.device(), device());
    const double error = RelativeError(actual, expected);
    std::cout << GetParam() << " attention, " << name
              << " mask: relative error " << error << "\n";
    EXPECT_LT(error, 1e-5);
  }
}

// The model's float32 forward pass on the device against the CPU's.
TEST_P(DeviceTest, ForwardPassMatchesTheCpu) {
  torch::manual_seed(22);
  Transformer on_cpu = testing_util::RandomTinyModel(22);
  on_cpu->to(torch::kFloat);
  Transformer on_device = testing_util::RandomTinyModel(22);
  on_device->to(device(), torch::kFloat);
  const torch::Tensor source =
      MakeSourceTensor({{5, 6, 7, 8, 9, 10}, {11, 12}, {13, 14, 15}},
                       ModelConfig(), torch::kCPU);
  const torch::Tensor target = at::randint(4, 19, {3, 5});
  const torch::Tensor expected = on_cpu->forward(source, target);
  const torch::Tensor actual =
      on_device->forward(source.to(device()), target.to(device()));
  ASSERT_EQ(actual.device(), device());
  EXPECT_LT(RelativeError(actual, expected), 1e-5);
}

// Greedy and beam decoding with the key/value cache on the device give the
// CPU's tokens (a float64 model: no near-ties within rounding).
TEST_P(DeviceTest, DecodersGiveTheCpusTokens) {
  const std::vector<std::vector<int64_t>> sources = {
      {5, 6, 7, 8, 9, 10, 11}, {12}, {13, 14, 15}, {16, 17, 18, 19, 20, 21}};
  BeamSearchOptions beam;
  beam.beam_size = 4;
  beam.limits.max_length = 20;
  for (uint64_t seed : {31, 32}) {
    Transformer on_cpu = testing_util::RandomTinyModel(seed);
    Transformer on_device = testing_util::RandomTinyModel(seed);
    on_device->to(device());
    c10::InferenceMode inference;
    const auto greedy = GreedyDecode(*on_cpu, sources, beam.limits);
    EXPECT_EQ(GreedyDecode(*on_device, sources, beam.limits), greedy)
        << "seed " << seed;
    // With the step replayed from CUDA graphs (none off CUDA).
    DecodingOptions graphed = beam.limits;
    graphed.cuda_graphs = true;
    EXPECT_EQ(GreedyDecode(*on_device, sources, graphed), greedy)
        << "seed " << seed;
    const auto expected = BeamSearch(*on_cpu, sources, beam);
    const auto actual = BeamSearch(*on_device, sources, beam);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      EXPECT_EQ(actual[i].front().ids, expected[i].front().ids)
          << "seed " << seed << " sentence " << i;
      EXPECT_NEAR(actual[i].front().score, expected[i].front().score, 1e-9);
    }
  }
}

// DecodeStep with StepGraphs gives the plain step's logits, though it
// attends over every cache column (those past its own masked); on CUDA it
// replays from graphs, captured again when a row leaves and when the cache
// grows (new storages).
TEST_P(DeviceTest, StepGraphsGiveThePlainStepsLogits) {
  Transformer model = testing_util::RandomTinyModel(34);
  model->to(device());
  c10::InferenceMode inference;
  // [3, src_len] and [3, 1, 1, src_len]
  const torch::Tensor source = MakeSourceTensor(
      {{5, 6, 7, 8}, {9, 10}, {11, 12, 13}}, ModelConfig(), device());
  const torch::Tensor mask = PaddingMask(source);
  const torch::Tensor memory = model->Encode(source, mask);
  DecoderState plain = model->StartDecoding(memory, mask);
  DecoderState graphed = model->StartDecoding(memory, mask);
  StepGraphs graphs;
  // [rows]
  torch::Tensor tokens =
      at::full({3}, int64_t{Vocabulary::kBosId},
               torch::TensorOptions(torch::kLong).device(device()));
  // Past the cache's first columns (it grows at DecoderState::kInitialColumns),
  // and row 1 leaves after step 8.
  for (int step = 0; step < 24; ++step) {
    if (step == 8) {
      plain.RemoveRows({1});
      graphed.RemoveRows({1});
      // The last row moved into row 1.
      tokens = tokens.index_select(
          0, at::tensor({int64_t{0}, int64_t{2}}, torch::kLong).to(device()));
    }
    const torch::Tensor expected = model->DecodeStep(tokens, &plain);
    const torch::Tensor actual = model->DecodeStep(tokens, &graphed, &graphs);
    ASSERT_EQ(actual.sizes(), expected.sizes()) << "step " << step;
    EXPECT_LT(RelativeError(actual, expected), 1e-10) << "step " << step;
    tokens = at::argmax(expected, -1);
  }
  EXPECT_EQ(graphs.failure(), "");
  std::cout << GetParam() << ": " << graphs.captures() << " graphs captured, "
            << graphs.replays() << " steps replayed of 24\n";
  if (device().is_cuda()) {
    EXPECT_GE(graphs.captures(), 3);
    EXPECT_GE(graphs.replays(), 18);
  } else {
    EXPECT_EQ(graphs.captures(), 0);
    EXPECT_EQ(graphs.replays(), 0);
  }
}

// SelectDecoder's half-precision types on this device (bfloat16 on the
// CPU, float16 and bfloat16 on CUDA): the weights take the type, the steps
// hand back float32 logits close to the float32 model's, and continuous
// batching (with CUDA graphs where they run) decodes without failing. Token
// agreement with float32 is printed, not asserted: one rounding can flip a
// random model's near-tie.
TEST_P(DeviceTest, HalfPrecisionStepsFollowFloat32s) {
  std::vector<std::string> types = {"bfloat16"};
  if (device().is_cuda()) types.insert(types.begin(), "float16");
  const torch::Tensor source = MakeSourceTensor(
      {{5, 6, 7, 8}, {9, 10}, {11, 12, 13}}, ModelConfig(), device());
  const torch::Tensor mask = PaddingMask(source);
  Transformer reference = testing_util::RandomTinyModel(35);
  reference->to(device());
  for (const std::string& type : types) {
    Transformer model = testing_util::RandomTinyModel(35);
    model->to(device());
    SelectDecoder(*model, "libtorch", type);
    EXPECT_EQ(model->parameters().front().scalar_type(),
              type == "float16" ? torch::kHalf : torch::kBFloat16);
    c10::InferenceMode inference;
    DecoderState expected_state =
        reference->StartDecoding(reference->Encode(source, mask), mask);
    DecoderState state =
        model->StartDecoding(model->Encode(source, mask), mask);
    torch::Tensor tokens =
        at::full({3}, int64_t{Vocabulary::kBosId},
                 torch::TensorOptions(torch::kLong).device(device()));
    double worst = 0;
    for (int step = 0; step < 12; ++step) {
      const torch::Tensor expected =
          reference->DecodeStep(tokens, &expected_state);
      const torch::Tensor actual = model->DecodeStep(tokens, &state);
      ASSERT_EQ(actual.scalar_type(), torch::kFloat) << type;
      worst = std::max(worst, RelativeError(actual, expected));
      tokens = at::argmax(expected, -1);  // Both read the same prefix.
    }
    // bfloat16 keeps 8 bits of mantissa (relative rounding 2^-9), float16
    // 11; errors compound over the layers, not by orders of magnitude.
    EXPECT_LT(worst, type == "float16" ? 5e-3 : 3e-2) << type;

    DecodingOptions limits;
    limits.max_length = 16;
    limits.cuda_graphs = device().is_cuda();
    int agreeing = 0;
    const std::vector<std::vector<int64_t>> sources = {
        {5, 6, 7}, {8, 9, 10, 11}, {12, 13}, {14, 15, 16}, {17}, {18, 19}};
    std::vector<std::vector<int64_t>> by_type[2];
    for (int half = 0; half < 2; ++half) {
      ContinuousDecoder decoder(half ? *model : *reference, limits);
      std::vector<EncodedSource> requests;
      for (size_t i = 0; i < sources.size(); ++i) {
        requests.push_back({sources[i], i % 2 == 0 ? 1 : 4});  // Greedy, beam.
      }
      for (ContinuousDecoder::Finished& finished :
           decoder.DecodeAll(requests)) {
        by_type[half].push_back(std::move(finished.target_ids));
      }
      if (const StepGraphs* graphs = decoder.graphs()) {
        EXPECT_EQ(graphs->failure(), "") << type;
      }
    }
    ASSERT_EQ(by_type[1].size(), sources.size()) << type;
    for (size_t i = 0; i < sources.size(); ++i) {
      agreeing += by_type[0][i] == by_type[1][i];
    }
    std::cout << GetParam() << " " << type << ": logits within " << worst
              << " of float32's; " << agreeing << " of " << sources.size()
              << " translations (greedy, beam 4) the same\n";
  }
  Transformer model = testing_util::RandomTinyModel(35);
  model->to(device());
  if (device().is_cpu()) {
    EXPECT_THROW(SelectDecoder(*model, "libtorch", "float16"),
                 std::invalid_argument);
    EXPECT_THROW(SelectDecoder(*model, "packed", "bfloat16"),
                 std::invalid_argument);
  }
  EXPECT_THROW(SelectDecoder(*model, "libtorch", "float64"),
               std::invalid_argument);
  // Back to float32 from a half type.
  SelectDecoder(*model, "libtorch", "bfloat16");
  SelectDecoder(*model, "libtorch", "float32");
  EXPECT_EQ(model->parameters().front().scalar_type(), torch::kFloat);
}

// Sentences joining while others decode and leaving as they end (the
// server's continuous batching) give the CPU's tokens. Once the rows of the
// first wave have left, the cache's leading columns are no row's, and the
// self-attention bias is a view that starts mid-vector, which the GPU's
// fused attention kernel once faulted on ("misaligned address").
TEST_P(DeviceTest, ContinuousBatchingGivesTheCpusTokens) {
  DecodingOptions limits;
  limits.max_length = 20;
  int64_t replays = 0;  // Of the last decode, with CUDA graphs.
  auto decode = [&](TransformerImpl& model) {
    c10::InferenceMode inference;
    ContinuousDecoder decoder(model, limits);
    std::map<int64_t, std::vector<int64_t>> translations;
    auto step = [&] {
      for (ContinuousDecoder::Finished& finished : decoder.Step()) {
        translations[finished.handle] = std::move(finished.target_ids);
      }
    };
    for (int64_t wave = 0; wave < 6; ++wave) {
      decoder.Add(
          {{{5 + wave, 6, 7}, wave % 2 == 0 ? 1 : 4}, {{8, 9 + wave}, 1}});
      for (int s = 0; s < 3; ++s) step();
    }
    while (decoder.active() > 0) step();
    if (const StepGraphs* graphs = decoder.graphs()) {
      EXPECT_EQ(graphs->failure(), "");
      replays = graphs->replays();
    }
    return translations;
  };
  Transformer on_cpu = testing_util::RandomTinyModel(33);
  Transformer on_device = testing_util::RandomTinyModel(33);
  on_device->to(device());
  const auto expected = decode(*on_cpu);
  EXPECT_EQ(expected.size(), 12u);
  EXPECT_EQ(decode(*on_device), expected);
  limits.cuda_graphs = true;  // Replayed where the batch keeps its rows.
  EXPECT_EQ(decode(*on_device), expected);
  // The tail, once the last wave has joined, keeps its rows for steps on end.
  if (device().is_cuda()) EXPECT_GT(replays, 0);
  std::cout << GetParam() << ": " << replays
            << " continuous batching steps replayed from CUDA graphs\n";
}

// Windows of steps (DecodingOptions::device_steps), whose greedy tokens and
// ends, or beam candidates and row order, are chosen on the device, give the
// tokens the CPU's host steps choose, with sentences joining between
// windows; with CUDA graphs, the steps of a window replay (its rows do not
// change).
TEST_P(DeviceTest, WindowsGiveTheCpusTokens) {
  DecodingOptions limits;
  limits.max_length = 20;
  int beam = 1;
  auto decode = [&](TransformerImpl& model, int64_t device_steps) {
    c10::InferenceMode inference;
    limits.device_steps = device_steps;
    limits.cuda_graphs = device_steps > 0;
    ContinuousDecoder decoder(model, limits);
    std::map<int64_t, std::vector<int64_t>> translations;
    auto step = [&] {
      for (ContinuousDecoder::Finished& finished : decoder.Step()) {
        translations[finished.handle] = std::move(finished.target_ids);
      }
    };
    for (int64_t wave = 0; wave < 6; ++wave) {
      decoder.Add({{{5 + wave, 6, 7}, beam}, {{8, 9 + wave}, beam}});
      step();
    }
    while (decoder.active() > 0) step();
    if (const StepGraphs* graphs = decoder.graphs()) {
      EXPECT_EQ(graphs->failure(), "");
      if (device().is_cuda()) EXPECT_GT(graphs->replays(), 0);
      std::cout << GetParam() << ": beam " << beam << ", windows of "
                << device_steps << ", " << graphs->replays() << " of "
                << graphs->steps() << " steps replayed\n";
    }
    return translations;
  };
  Transformer on_cpu = testing_util::RandomTinyModel(34);
  Transformer on_device = testing_util::RandomTinyModel(34);
  on_device->to(device());
  for (beam = 1; beam <= 4; beam += 3) {
    const auto expected = decode(*on_cpu, 0);
    EXPECT_EQ(expected.size(), 12u);
    for (const int64_t device_steps : {1, 8}) {
      EXPECT_EQ(decode(*on_device, device_steps), expected)
          << "beam " << beam << ", windows of " << device_steps;
    }
  }
}

// A tiny model trained on the device: its checkpoint loads on the CPU, and
// the device translates as the CPU's reference step does, greedy and beam.
TEST_P(DeviceTest, TrainsAModelThatTranslatesAsOnTheCpu) {
  const std::string work = testing_util::MakeTempDir("device_" + GetParam());
  const std::string checkpoint = testing_util::TrainTinyModelOn(
      testing_util::WriteTinyPairs(work), work + "/run",
      [&](TrainingOptions& options) { options.device = GetParam(); });
  EXPECT_NO_THROW(LoadCheckpoint(checkpoint, torch::kCPU));

  TranslatorOptions options;
  options.cpu_decoder = "libtorch";
  options.compute_type = "float32";
  options.device = "cpu";
  const auto cpu = Translator::Load(checkpoint, options);
  options.device = GetParam();
  const auto here = Translator::Load(checkpoint, options);
  EXPECT_EQ(here->device_name(), device().str());
  const std::vector<std::string> texts = {
      "Tom is happy.", "I like to read books.", "Where is the station?"};
  for (int beam_size : {1, 4}) {
    EXPECT_EQ(here->Translate(texts, beam_size),
              cpu->Translate(texts, beam_size))
        << "beam " << beam_size;
  }
}

// A run saved on the CPU resumes on the device: its weights and the
// optimizer's moments move there.
TEST_P(DeviceTest, ResumesARunSavedOnTheCpu) {
  const std::string work = testing_util::MakeTempDir("resume_" + GetParam());
  TrainingOptions options = testing_util::TinyTrainingOptions(
      testing_util::SharedDataPath("en-zh/train_mini.tsv"), work);
  options.epochs = 1;
  std::ostringstream log;
  Trainer(options).Run(log);
  options.device = GetParam();
  options.epochs = 2;
  options.resume = true;
  const TrainingResult resumed = Trainer(options).Run(log);
  EXPECT_NE(log.str().find("resumed from"), std::string::npos) << log.str();
  EXPECT_EQ(
      LoadCheckpoint(resumed.last_checkpoint, torch::kCPU).training.at("epoch"),
      2);
}

// --precision bf16 (bfloat16 autocast) trains the same run as float32 to
// about the same dev loss, by other arithmetic: its weights differ. (A short
// warm-up and small batches: the loss falls within the five epochs.)
TEST_P(DeviceTest, TrainsInBfloat16AboutAsInFloat32) {
  const std::string work = testing_util::MakeTempDir("bf16_" + GetParam());
  auto train = [&](const std::string& precision) {
    TrainingOptions options = testing_util::TinyTrainingOptions(
        testing_util::SharedDataPath("en-zh/train_mini.tsv"),
        work + "/" + precision);
    options.device = GetParam();
    options.precision = precision;
    options.epochs = 5;
    options.batch_tokens = 256;
    options.warmup_steps = 30;
    options.average_last = 0;
    std::ostringstream log;
    const TrainingResult result = Trainer(options).Run(log);
    std::cout << precision << " dev loss by epoch:";
    for (const EpochReport& epoch : result.epochs) {
      std::cout << " " << epoch.dev_loss;
    }
    std::cout << "\n";
    EXPECT_LT(result.epochs.back().dev_loss,
              0.95 * result.epochs.front().dev_loss);
    return LoadCheckpoint(result.last_checkpoint, torch::kCPU);
  };
  const Checkpoint fp32 = train("fp32");
  const Checkpoint bf16 = train("bf16");
  EXPECT_EQ(bf16.training.at("precision"), "bf16");
  const double fp32_loss = fp32.training.at("dev_loss").get<double>();
  EXPECT_NEAR(bf16.training.at("dev_loss").get<double>(), fp32_loss,
              0.05 * fp32_loss);
  const double largest =
      testing_util::LargestWeightDifference(bf16.model, fp32.model);
  EXPECT_GT(largest, 1e-4);
}

// fanyi-server --device on a real gRPC channel: the model is where it was
// asked to be, and answers.
TEST_P(DeviceTest, ServerTranslatesOnTheDevice) {
  const std::string model = testing_util::TrainTinyModel(
      testing_util::MakeTempDir("device_server_" + GetParam()));
  testing_util::ServerProcess server(
      {"--model_dir=" + model, "--device=" + GetParam()});
  v1::TranslateResponse response;
  const grpc::Status status =
      testing_util::TranslateAt(server.address(), "Tom is happy.", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(response.translation().text().empty());
  const std::string metrics =
      testing_util::HttpGet(server.metrics_port(), "/metrics");
  EXPECT_NE(metrics.find("device=\"" + device().str() + "\""),
            std::string::npos)
      << metrics;
}

INSTANTIATE_TEST_SUITE_P(Devices, DeviceTest,
                         ::testing::ValuesIn(testing_util::TestDevices()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fanyi
