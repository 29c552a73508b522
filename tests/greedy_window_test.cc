// Windows of greedy steps chosen on the device (RunGreedyWindow, used by the
// ContinuousDecoder when DecodingOptions::device_steps is set), run here on
// the CPU through the same LibTorch operations a GPU runs: the same tokens
// as the host's step by step choices, whatever the window.
#include "common/decoding/greedy_window.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "common/decoding/decoder_selection.h"
#include "common/decoding/decoding_options.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/decoder_state.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"
#include "tests/random_model.h"

namespace fanyi {
namespace {

DecodingOptions Limits(int64_t device_steps) {
  DecodingOptions options;
  options.max_length = 20;
  options.length_ratio = 1.5;
  options.length_offset = 3;
  options.device_steps = device_steps;
  return options;
}

const std::vector<std::vector<int64_t>> kSources = {
    {5, 6, 7, 8, 9, 10, 11},
    {12},
    {13, 14, 15},
    {16, 17, 18, 19, 20, 21, 22, 4, 5, 6, 7, 8},
    {9, 9, 10},
    {4, 20, 6},
    {7, 7, 7, 7, 8}};

struct Decoded {
  std::map<size_t, ContinuousDecoder::Finished> by_source;
  int64_t steps = 0;  // Step() calls.
};

// Decodes kSources on one decoder as a server would: a few sentences first,
// more joining between steps, source 5 removed after its first step (left
// out of the results: a window may have ended it first), and source 6 with a
// forced first token (`forced`). Every sentence greedy unless `beam_source`
// names one to search with beam 3.
Decoded DecodeJoiningAndLeaving(TransformerImpl& model,
                                const DecodingOptions& options,
                                const std::vector<int64_t>& forced,
                                int beam_source = -1) {
  ContinuousDecoder decoder(model, options);
  Decoded decoded;
  std::map<int64_t, size_t> source_of;
  auto add = [&](std::vector<size_t> indices) {
    std::vector<EncodedSource> sources;
    for (size_t i : indices) {
      EncodedSource source{kSources[i],
                           static_cast<int>(i) == beam_source ? 3 : 1};
      if (i == 6) source.target_prefix = forced;
      sources.push_back(source);
    }
    const auto handles = decoder.Add(sources);
    for (size_t k = 0; k < indices.size(); ++k) {
      source_of[handles[k]] = indices[k];
    }
    return handles;
  };
  auto step = [&] {
    ++decoded.steps;
    for (auto& sentence : decoder.Step()) {
      const size_t source = source_of.at(sentence.handle);
      EXPECT_EQ(decoded.by_source.count(source), 0u) << "source " << source;
      decoded.by_source[source] = std::move(sentence);
    }
  };
  add({0, 1});
  step();
  const int64_t removed = add({2, 5})[1];
  step();
  decoder.Remove({removed});
  step();
  add({3, 4, 6});
  while (decoder.active() > 0) step();
  EXPECT_EQ(decoder.rows(), 0);
  decoded.by_source.erase(5);
  return decoded;
}

// Every window, whatever its length, ends each sentence exactly as the
// host's step does (tokens, log-probability, scored tokens), with sentences
// joining and leaving between windows, some ending on </s> and some at their
// length limits, with </s> held back or not, and with a sentence whose forced
// prefix keeps the first steps on the host.
TEST(GreedyWindowTest, WindowsChooseWhatTheHostChooses) {
  for (uint64_t seed : {3, 4, 5}) {
    for (const double eos_bias : {0.0, 2.0}) {
      for (const int64_t min_length : {0, 4}) {
        Transformer model = testing_util::RandomEndingModel(seed, eos_bias);
        const std::vector<int64_t> forced = {9};
        DecodingOptions host = Limits(0);
        host.min_length = min_length;
        const Decoded expected = DecodeJoiningAndLeaving(*model, host, forced);
        ASSERT_EQ(expected.by_source.size(), kSources.size() - 1);
        for (const int64_t device_steps : {1, 2, 8}) {
          SCOPED_TRACE("seed " + std::to_string(seed) + " eos bias " +
                       std::to_string(eos_bias) + " min_length " +
                       std::to_string(min_length) + " device_steps " +
                       std::to_string(device_steps));
          DecodingOptions window = Limits(device_steps);
          window.min_length = min_length;
          const Decoded got = DecodeJoiningAndLeaving(*model, window, forced);
          ASSERT_EQ(got.by_source.size(), expected.by_source.size());
          for (const auto& [source, want] : expected.by_source) {
            const ContinuousDecoder::Finished& have = got.by_source.at(source);
            EXPECT_EQ(have.target_ids, want.target_ids) << "source " << source;
            EXPECT_EQ(have.scored_tokens, want.scored_tokens)
                << "source " << source;
            EXPECT_NEAR(have.log_probability, want.log_probability, 1e-9)
                << "source " << source;
          }
          EXPECT_LE(got.steps, expected.steps);
          if (device_steps > 1 && eos_bias == 0) {
            // Sentences that run to their limits take fewer calls.
            EXPECT_LT(got.steps, expected.steps) << "no window ran";
          }
        }
        if (eos_bias > 0 && min_length == 0) {
          // The test's sentences do end early on </s>.
          bool early = false;
          for (const auto& [source, done] : expected.by_source) {
            early |= done.scored_tokens > 0 &&
                     done.scored_tokens ==
                         static_cast<int64_t>(done.target_ids.size()) + 1;
          }
          EXPECT_TRUE(early);
        }
      }
    }
  }
}

// A batch with a beam search steps on the host, one step a call, and its
// greedy sentences still end as decoded alone.
TEST(GreedyWindowTest, BatchesWithABeamSearchStepOnTheHost) {
  Transformer model = testing_util::RandomEndingModel(7, 1.0);
  const Decoded expected =
      DecodeJoiningAndLeaving(*model, Limits(0), {}, /*beam_source=*/3);
  const Decoded got =
      DecodeJoiningAndLeaving(*model, Limits(8), {}, /*beam_source=*/3);
  ASSERT_EQ(got.by_source.size(), expected.by_source.size());
  for (const auto& [source, want] : expected.by_source) {
    EXPECT_EQ(got.by_source.at(source).target_ids, want.target_ids)
        << "source " << source;
  }
}

// The packed CPU step in float32 gives a window the same tokens as its own
// host steps (its logits are the step's; only the log-probabilities' last
// bits may differ, summed in float here and in double there).
TEST(GreedyWindowTest, PackedStepWindowsMatchItsHostSteps) {
  Transformer model = testing_util::RandomEndingModel(8, 1.0);
  model->to(at::kFloat);
  SelectDecoder(*model, "packed", "float32");
  ASSERT_NE(model->inference_kernel(), nullptr);
  const Decoded expected = DecodeJoiningAndLeaving(*model, Limits(0), {9});
  const Decoded got = DecodeJoiningAndLeaving(*model, Limits(8), {9});
  ASSERT_EQ(got.by_source.size(), expected.by_source.size());
  for (const auto& [source, want] : expected.by_source) {
    EXPECT_EQ(got.by_source.at(source).target_ids, want.target_ids)
        << "source " << source;
    EXPECT_NEAR(got.by_source.at(source).log_probability, want.log_probability,
                1e-4)
        << "source " << source;
  }
}

// A window stops where the row nearest its limit reaches it, and refuses to
// run past it or without one entry per row.
TEST(GreedyWindowTest, NoWindowRunsARowPastItsLimit) {
  GreedyWindowStart start;
  start.lengths = {0, 5, 3};
  start.limits = {20, 8, 20};
  EXPECT_EQ(GreedyWindowSteps(start, 8), 3);
  EXPECT_EQ(GreedyWindowSteps(start, 2), 2);
  start.lengths[1] = 8;  // At its limit: one step to end it.
  EXPECT_EQ(GreedyWindowSteps(start, 8), 1);

  Transformer model = testing_util::RandomTinyModel(3);
  c10::InferenceMode inference;
  const torch::Tensor sources =
      MakeSourceTensor({kSources[0], kSources[1]}, model->config(), at::kCPU);
  const torch::Tensor mask = PaddingMask(sources);
  DecoderState state = model->StartDecoding(model->Encode(sources, mask), mask);
  GreedyWindowStart two;
  two.last_tokens = {Vocabulary::kBosId, Vocabulary::kBosId};
  two.lengths = {0, 0};
  two.limits = {4, 6};
  EXPECT_THROW(RunGreedyWindow(*model, state, nullptr, two, 5),
               std::invalid_argument);
  EXPECT_THROW(RunGreedyWindow(*model, state, nullptr, two, 0),
               std::invalid_argument);
  GreedyWindowStart one_row = two;
  one_row.limits.pop_back();
  EXPECT_THROW(RunGreedyWindow(*model, state, nullptr, one_row, 1),
               std::invalid_argument);
  const GreedyWindow window = RunGreedyWindow(*model, state, nullptr, two, 4);
  EXPECT_EQ(window.steps, 4);
  EXPECT_EQ(window.finished[0], 1);  // At its limit, or ended on </s>.
  EXPECT_LE(window.tokens[0].size(), 4u);
  EXPECT_LE(window.tokens[1].size(), 4u);
}

}  // namespace
}  // namespace fanyi
