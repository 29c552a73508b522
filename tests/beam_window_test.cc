// Windows of beam search steps whose candidates, beams and row order are
// chosen on the device (RunBeamWindow, used by the ContinuousDecoder when
// DecodingOptions::device_steps is set and every row is a beam search), run
// here on the CPU through the LibTorch operations a GPU runs: the same
// translations, alternatives and scores as the host's step by step search.
#include "common/decoding/beam_window.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "common/decoding/decoding_options.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/decoder_state.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"
#include "tests/random_model.h"

namespace fanyi {
namespace {

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
  int64_t calls = 0;  // Step() calls.
};

// Decodes kSources with beam `beam` (two alternatives) on one decoder:
// sentences joining between steps (each one's first step on the host),
// source 5 removed after a step (left out of the results: a window may
// have ended it first), and source 6 with a forced first token.
Decoded DecodeJoiningAndLeaving(TransformerImpl& model,
                                const DecodingOptions& options, int beam) {
  ContinuousDecoder decoder(model, options);
  Decoded decoded;
  std::map<int64_t, size_t> source_of;
  auto add = [&](std::vector<size_t> indices) {
    std::vector<EncodedSource> sources;
    for (size_t i : indices) {
      EncodedSource source{kSources[i], beam};
      source.alternatives = 2;
      if (i == 6) source.target_prefix = {9};
      sources.push_back(source);
    }
    const auto handles = decoder.Add(sources);
    for (size_t k = 0; k < indices.size(); ++k) {
      source_of[handles[k]] = indices[k];
    }
    return handles;
  };
  auto step = [&] {
    ++decoded.calls;
    for (auto& sentence : decoder.Step()) {
      decoded.by_source[source_of.at(sentence.handle)] = std::move(sentence);
    }
  };
  add({0, 1});
  step();
  step();
  const int64_t removed = add({2, 5})[1];
  step();
  step();
  decoder.Remove({removed});
  step();
  add({3, 4, 6});
  while (decoder.active() > 0) step();
  EXPECT_EQ(decoder.rows(), 0);
  decoded.by_source.erase(5);
  return decoded;
}

// Every window length gives each sentence the host's best translation, its
// alternatives, log-probability and scored tokens, whichever way searches
// end and lengths are normalized, with </s> held back or not.
TEST(BeamWindowTest, WindowsSearchAsTheHostSearches) {
  for (uint64_t seed : {3, 4}) {
    for (const double eos_bias : {0.0, 1.5}) {
      for (const bool stops_early : {false, true}) {
        for (const LengthNormalization normalization :
             {LengthNormalization::kGnmt, LengthNormalization::kCtranslate2}) {
          for (const int64_t min_length : {0, 4}) {
            Transformer model = testing_util::RandomEndingModel(seed, eos_bias);
            DecodingOptions host;
            host.max_length = 20;
            host.length_ratio = 1.5;
            host.length_offset = 3;
            host.beam_stops_early = stops_early;
            host.length_normalization = normalization;
            host.min_length = min_length;
            const Decoded expected = DecodeJoiningAndLeaving(*model, host, 3);
            ASSERT_EQ(expected.by_source.size(), kSources.size() - 1);
            for (const int64_t device_steps : {1, 2, 8}) {
              SCOPED_TRACE("seed " + std::to_string(seed) + " eos bias " +
                           std::to_string(eos_bias) + " early " +
                           std::to_string(stops_early) + " normalization " +
                           std::to_string(static_cast<int>(normalization)) +
                           " min_length " + std::to_string(min_length) +
                           " device_steps " + std::to_string(device_steps));
              DecodingOptions window = host;
              window.device_steps = device_steps;
              const Decoded got = DecodeJoiningAndLeaving(*model, window, 3);
              ASSERT_EQ(got.by_source.size(), expected.by_source.size());
              for (const auto& [source, want] : expected.by_source) {
                const ContinuousDecoder::Finished& have =
                    got.by_source.at(source);
                EXPECT_EQ(have.target_ids, want.target_ids)
                    << "source " << source;
                EXPECT_EQ(have.alternatives, want.alternatives)
                    << "source " << source;
                EXPECT_EQ(have.scored_tokens, want.scored_tokens)
                    << "source " << source;
                EXPECT_NEAR(have.log_probability, want.log_probability, 1e-9)
                    << "source " << source;
              }
              EXPECT_LE(got.calls, expected.calls);
              if (device_steps > 1 && eos_bias == 0 && !stops_early) {
                EXPECT_LT(got.calls, expected.calls) << "no window ran";
              }
            }
          }
        }
      }
    }
  }
}

// A search whose beams all died (only </s> can follow, and the endings
// went to finished hypotheses) runs on to its limit: a window counts its
// steps from the search's own, not from its dead beams' empty prefixes, and
// stays within the position table, ending it as the host does.
TEST(BeamWindowTest, SearchesWithEveryBeamDeadStopAtTheirLimit) {
  Transformer model = testing_util::RandomEndingModel(5, 0.0);
  {
    torch::NoGradGuard no_grad;
    torch::Tensor bias = model->named_parameters()["generator.bias"];
    bias.fill_(-std::numeric_limits<double>::infinity());
    bias[Vocabulary::kEosId] = 0.0;
  }
  DecodingOptions options;
  options.max_length = 63;  // The position table's last.
  options.length_ratio = 10;
  auto decode = [&](int64_t device_steps) {
    options.device_steps = device_steps;
    ContinuousDecoder decoder(*model, options);
    EncodedSource source{kSources[3], 4};
    source.target_prefix = std::vector<int64_t>(50, 9);
    decoder.Add({source});
    std::vector<ContinuousDecoder::Finished> done;
    while (decoder.active() > 0) {
      for (auto& sentence : decoder.Step()) done.push_back(std::move(sentence));
    }
    return done;
  };
  const auto expected = decode(0);
  ASSERT_EQ(expected.size(), 1u);
  const auto got = decode(64);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.front().target_ids, expected.front().target_ids);
  EXPECT_EQ(got.front().scored_tokens, expected.front().scored_tokens);
}

// A window refuses a start that does not hold every row once, and steps
// past a search's limit.
TEST(BeamWindowTest, RefusesStartsThatDoNotCoverTheBatch) {
  BeamWindowStart start;
  start.lengths = {2, 7};
  start.limits = {10, 9};
  EXPECT_EQ(BeamWindowSteps(start, 8), 2);
  start.lengths[1] = 9;
  EXPECT_EQ(BeamWindowSteps(start, 8), 1);

  Transformer model = testing_util::RandomTinyModel(3);
  c10::InferenceMode inference;
  const torch::Tensor sources =
      MakeSourceTensor({kSources[0], kSources[1]}, model->config(), at::kCPU);
  const torch::Tensor mask = PaddingMask(sources);
  DecoderState state = model->StartDecoding(model->Encode(sources, mask), mask);
  BeamWindowStart two;
  two.beam = 1;
  two.rows = {{0}, {1}};
  two.scores = {{0.0}, {0.0}};
  two.last_tokens = {Vocabulary::kBosId, Vocabulary::kBosId};
  two.lengths = {0, 0};
  two.limits = {4, 6};
  EXPECT_THROW(RunBeamWindow(*model, state, nullptr, two, 5),
               std::invalid_argument);
  BeamWindowStart repeated = two;
  repeated.rows = {{0}, {0}};
  EXPECT_THROW(RunBeamWindow(*model, state, nullptr, repeated, 1),
               std::invalid_argument);
  BeamWindowStart outside = two;
  outside.rows = {{0}, {2}};
  EXPECT_THROW(RunBeamWindow(*model, state, nullptr, outside, 1),
               std::invalid_argument);
  const BeamWindow window = RunBeamWindow(*model, state, nullptr, two, 4);
  EXPECT_EQ(window.steps, 4);
  EXPECT_EQ(window.totals.size(), 4u);
  EXPECT_EQ(window.indices.front().size(), 2u * window.count);
}

}  // namespace
}  // namespace fanyi
