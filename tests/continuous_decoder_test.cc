#include "common/decoding/continuous_decoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "common/decoding/beam_search.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"
#include "tests/random_model.h"

namespace fanyi {
namespace {

DecodingOptions Limits() {
  DecodingOptions options;
  options.max_length = 20;
  options.length_ratio = 1.5;
  options.length_offset = 3;
  return options;
}

// `sources` decoded greedily.
std::vector<EncodedSource> Greedy(
    const std::vector<std::vector<int64_t>>& sources) {
  std::vector<EncodedSource> greedy;
  for (const auto& source : sources) greedy.push_back({source, 1});
  return greedy;
}

const std::vector<std::vector<int64_t>> kSources = {
    {5, 6, 7, 8, 9, 10, 11},
    {12},
    {13, 14, 15},
    {16, 17, 18, 19, 20, 21, 22, 4, 5, 6, 7, 8},
    {9, 9, 10}};

// Sentences that join while others are half-way through decode exactly as
// they would alone: their positions, cache columns and source padding are
// kept apart by the masks.
TEST(ContinuousDecoderTest, SentencesJoiningMidDecodeMatchDecodingAlone) {
  for (uint64_t seed : {3, 4, 5}) {
    Transformer model = testing_util::RandomTinyModel(seed);
    ContinuousDecoder decoder(*model, Limits());
    std::map<int64_t, std::vector<int64_t>> results;
    std::map<int64_t, size_t> source_of;
    auto collect = [&] {
      for (auto& row : decoder.Step()) results[row.handle] = row.target_ids;
    };
    // Source 0 starts alone, 1 and 2 join after two steps, 3 and 4 after
    // four more (the longest source joins late, widening the source padding).
    source_of[decoder.Add(Greedy({kSources[0]}))[0]] = 0;
    collect();
    collect();
    const auto second = decoder.Add(Greedy({kSources[1], kSources[2]}));
    source_of[second[0]] = 1;
    source_of[second[1]] = 2;
    for (int i = 0; i < 4; ++i) collect();
    const auto third = decoder.Add(Greedy({kSources[3], kSources[4]}));
    source_of[third[0]] = 3;
    source_of[third[1]] = 4;
    while (decoder.active() > 0) collect();

    ASSERT_EQ(results.size(), kSources.size());
    for (const auto& [handle, target] : results) {
      const size_t source = source_of.at(handle);
      EXPECT_EQ(target,
                GreedyDecodeWithoutCache(*model, kSources[source], Limits()))
          << "seed " << seed << " source " << source;
    }
  }
}

TEST(ContinuousDecoderTest, RemovedSentencesLeaveAndOthersGoOn) {
  Transformer model = testing_util::RandomTinyModel(6);
  ContinuousDecoder decoder(*model, Limits());
  const auto handles = decoder.Add(Greedy(kSources));
  EXPECT_EQ(decoder.active(), 5);
  decoder.Step();
  decoder.Remove({handles[0], handles[3], 12345});
  std::map<int64_t, std::vector<int64_t>> results;
  while (decoder.active() > 0) {
    for (auto& row : decoder.Step()) results[row.handle] = row.target_ids;
  }
  EXPECT_EQ(results.count(handles[0]), 0u);
  EXPECT_EQ(results.count(handles[3]), 0u);
  for (size_t i : {1, 2, 4}) {
    EXPECT_EQ(results.at(handles[i]),
              GreedyDecodeWithoutCache(*model, kSources[i], Limits()));
  }
  // An emptied decoder takes new sentences again.
  const int64_t again = decoder.Add(Greedy({kSources[2]}))[0];
  std::vector<int64_t> target;
  while (decoder.active() > 0) {
    for (auto& row : decoder.Step()) {
      if (row.handle == again) target = row.target_ids;
    }
  }
  EXPECT_EQ(target, GreedyDecodeWithoutCache(*model, kSources[2], Limits()));
}

// An untied random model whose generator favours </s>, so that sentences end
// before their length limits and beams finish at different steps.
Transformer EndingModel(uint64_t seed) {
  return testing_util::RandomEndingModel(seed, 2.0);
}

// With min_length, </s> is held back until a translation has that many
// tokens, greedy and in a beam search; sentences that join later count
// their own tokens. The model ends early without it.
TEST(ContinuousDecoderTest, MinLengthHoldsBackTheEnd) {
  Transformer model = EndingModel(3);
  for (int beam : {1, 3}) {
    SCOPED_TRACE("beam " + std::to_string(beam));
    // Sources whose length limits let translations reach 6 tokens.
    std::vector<EncodedSource> sources;
    for (const auto& source : kSources) {
      if (MaxTargetLength(Limits(), source.size()) >= 6) {
        sources.push_back({source, beam});
      }
    }
    auto shortest = [&](const DecodingOptions& options) {
      ContinuousDecoder decoder(*model, options);
      std::vector<int64_t> handles = decoder.Add({sources.front()});
      decoder.Step();
      decoder.Step();
      decoder.Add({sources.begin() + 1, sources.end()});
      size_t length = options.max_length;
      while (decoder.active() > 0) {
        for (const auto& done : decoder.Step()) {
          length = std::min(length, done.target_ids.size());
        }
      }
      return length;
    };
    DecodingOptions options = Limits();
    ASSERT_LT(shortest(options), 6u);
    options.min_length = 6;
    EXPECT_EQ(shortest(options), 6u);
  }
}

// The best hypothesis of beam search on `source` alone (the reference).
std::vector<int64_t> BeamAlone(TransformerImpl& model,
                               const std::vector<int64_t>& source, int beam,
                               const DecodingOptions& limits = Limits()) {
  BeamSearchOptions options;
  options.beam_size = beam;
  options.limits = limits;
  return BeamSearch(model, {source}, options).front().front().ids;
}

// Beam groups of different widths and greedy rows share steps, joining while
// others are half-way through: every sentence ends exactly as it would
// decoded alone, so rows are reordered within their own group only; with
// either way of ending a beam search.
TEST(ContinuousDecoderTest, BeamGroupsAndGreedyRowsSharingStepsMatchAlone) {
  const std::vector<int> beams = {4, 1, 2, 4, 1};
  for (uint64_t seed : {7, 8, 9}) {
    for (const bool ending : {false, true}) {
      for (const bool stops_early : {false, true}) {
        Transformer model =
            ending ? EndingModel(seed) : testing_util::RandomTinyModel(seed);
        DecodingOptions limits = Limits();
        limits.beam_stops_early = stops_early;
        ContinuousDecoder decoder(*model, limits);
        std::map<int64_t, size_t> source_of;
        std::map<int64_t, std::vector<int64_t>> results;
        auto add = [&](std::vector<size_t> indices) {
          std::vector<EncodedSource> sources;
          for (size_t i : indices) sources.push_back({kSources[i], beams[i]});
          const auto handles = decoder.Add(sources);
          for (size_t k = 0; k < indices.size(); ++k) {
            source_of[handles[k]] = indices[k];
          }
        };
        auto step = [&] {
          for (auto& sentence : decoder.Step()) {
            results[sentence.handle] = sentence.target_ids;
          }
        };
        add({0, 1});
        EXPECT_EQ(decoder.rows(), 2) << "a beam search's first step is one row";
        step();
        step();
        add({2, 3});
        for (int i = 0; i < 3; ++i) step();
        add({4});
        while (decoder.active() > 0) step();
        EXPECT_EQ(decoder.rows(), 0);

        ASSERT_EQ(results.size(), kSources.size());
        for (const auto& [handle, target] : results) {
          const size_t i = source_of.at(handle);
          EXPECT_EQ(target, BeamAlone(*model, kSources[i], beams[i], limits))
              << "seed " << seed << " ending " << ending << " early "
              << stops_early << " source " << i << " beam " << beams[i];
        }
      }
    }
  }
}

// Alternatives are the next-best hypotheses BeamSearch's n-best list gives
// for the same source, in its order, at most beam - 1 of them.
TEST(ContinuousDecoderTest, AlternativesAreTheNBestListAfterTheBest) {
  for (uint64_t seed : {7, 8}) {
    Transformer model = EndingModel(seed);
    ContinuousDecoder decoder(*model, Limits());
    // Asks for 2 of beam 4, 5 of beam 3 (capped at 2), 1 of greedy (none).
    const std::vector<EncodedSource> sources = {
        {kSources[0], 4, 2}, {kSources[2], 3, 5}, {kSources[4], 1, 1}};
    const std::vector<int64_t> handles = decoder.Add(sources);
    std::map<int64_t, ContinuousDecoder::Finished> finished;
    while (decoder.active() > 0) {
      for (auto& sentence : decoder.Step()) {
        finished[sentence.handle] = std::move(sentence);
      }
    }
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const ContinuousDecoder::Finished& result = finished.at(handles[i]);
      if (sources[i].beam_size == 1) {
        EXPECT_TRUE(result.alternatives.empty());
        continue;
      }
      BeamSearchOptions options;
      options.beam_size = sources[i].beam_size;
      options.n_best = sources[i].beam_size;
      options.limits = Limits();
      const std::vector<Hypothesis> n_best =
          BeamSearch(*model, {sources[i].ids}, options).front();
      ASSERT_GE(n_best.size(), 3u) << "seed " << seed << " source " << i;
      EXPECT_EQ(result.target_ids, n_best[0].ids);
      ASSERT_EQ(result.alternatives.size(), 2u);
      EXPECT_EQ(result.alternatives[0], n_best[1].ids);
      EXPECT_EQ(result.alternatives[1], n_best[2].ids);
    }
  }
}

// The sum of log P(token | source, the tokens before) over `target`, and
// over </s> after it when `with_end`, from one forward pass without a cache.
double ForwardLogProbability(TransformerImpl& model,
                             const std::vector<int64_t>& source,
                             const std::vector<int64_t>& target,
                             bool with_end) {
  c10::InferenceMode inference;
  const torch::Device cpu(torch::kCPU);
  std::vector<int64_t> input = {Vocabulary::kBosId};
  input.insert(input.end(), target.begin(), target.end());
  // [1, tgt_len + 1, vocab] -> [tgt_len + 1, vocab]
  const torch::Tensor log_probs = torch::log_softmax(
      model.forward(MakeSourceTensor({source}, model.config(), cpu),
                    PadRows({input}, cpu)),
      -1)[0];
  double sum = 0;
  for (size_t i = 0; i < target.size(); ++i) {
    sum += log_probs[static_cast<int64_t>(i)][target[i]].item<double>();
  }
  if (with_end) {
    sum += log_probs[static_cast<int64_t>(target.size())][Vocabulary::kEosId]
               .item<double>();
  }
  return sum;
}

// Every finished sentence carries the log-probability of what it says (its
// ids, and </s> when it ended with one), as a forward pass scores it,
// greedy and beam alike, and with tokens banned by no_repeat_ngram (the
// model's probability, not one renormalized over the allowed tokens);
// DecodeAll numbers them as given.
TEST(ContinuousDecoderTest, FinishedSentencesCarryTheirLogProbability) {
  const std::vector<int> beams = {4, 1, 2, 4, 1};
  int ended = 0;
  int capped = 0;
  for (uint64_t seed : {7, 8}) {
    for (const bool ending : {false, true}) {
      Transformer model =
          ending ? EndingModel(seed) : testing_util::RandomTinyModel(seed);
      std::vector<EncodedSource> sources;
      for (int no_repeat : {0, 2}) {
        for (size_t i = 0; i < kSources.size(); ++i) {
          sources.push_back({kSources[i], beams[i]});
          sources.back().no_repeat_ngram = no_repeat;
        }
      }
      const std::vector<ContinuousDecoder::Finished> finished =
          ContinuousDecoder(*model, Limits()).DecodeAll(sources);
      ASSERT_EQ(finished.size(), sources.size());
      for (size_t k = 0; k < finished.size(); ++k) {
        const size_t i = k % kSources.size();
        const ContinuousDecoder::Finished& sentence = finished[k];
        EXPECT_EQ(sentence.handle, static_cast<int64_t>(k));
        const auto length = static_cast<int64_t>(sentence.target_ids.size());
        const bool with_end = sentence.scored_tokens == length + 1;
        ASSERT_TRUE(with_end || sentence.scored_tokens == length)
            << sentence.scored_tokens << " scored tokens for " << length;
        // A sentence under its limit can only have ended with </s>.
        if (length < MaxTargetLength(Limits(), kSources[i].size())) {
          EXPECT_TRUE(with_end) << "source " << i;
        }
        ++(with_end ? ended : capped);
        const double expected = ForwardLogProbability(
            *model, kSources[i], sentence.target_ids, with_end);
        EXPECT_NEAR(sentence.log_probability, expected,
                    1e-4 * (1 + std::abs(expected)))
            << "seed " << seed << " ending " << ending << " source " << k;
        EXPECT_LT(sentence.log_probability, 0);
      }
    }
  }
  EXPECT_GT(ended, 0);
  EXPECT_GT(capped, 0);
}

// True when some n-gram of `n` tokens appears twice in `ids`.
bool RepeatsAnNgram(const std::vector<int64_t>& ids, size_t n) {
  std::set<std::vector<int64_t>> seen;
  for (size_t i = 0; i + n <= ids.size(); ++i) {
    if (!seen.insert({ids.begin() + i, ids.begin() + i + n}).second) {
      return true;
    }
  }
  return false;
}

// With no_repeat_ngram, no translation holds an n-gram twice, greedy or
// beam, though the same random models repeat plenty without it; rows
// without it in the same steps decode as they would alone.
TEST(ContinuousDecoderTest, NoRepeatNgramBansRepeatsInItsOwnRowsOnly) {
  int repeating_without = 0;
  for (uint64_t seed : {3, 4, 5}) {
    Transformer model = testing_util::RandomTinyModel(seed);
    for (int n : {1, 2, 3}) {
      for (int beam : {1, 3}) {
        std::vector<EncodedSource> sources;
        for (const auto& ids : kSources) {
          EncodedSource banned{ids, beam};
          banned.no_repeat_ngram = n;
          sources.push_back(banned);
          sources.push_back({ids, beam});
        }
        const auto finished =
            ContinuousDecoder(*model, Limits()).DecodeAll(sources);
        for (size_t i = 0; i < kSources.size(); ++i) {
          EXPECT_FALSE(RepeatsAnNgram(finished[2 * i].target_ids, n))
              << "seed " << seed << " n " << n << " beam " << beam << " source "
              << i;
          const std::vector<int64_t> alone =
              beam == 1
                  ? GreedyDecodeWithoutCache(*model, kSources[i], Limits())
                  : BeamAlone(*model, kSources[i], beam);
          EXPECT_EQ(finished[2 * i + 1].target_ids, alone);
          repeating_without += RepeatsAnNgram(alone, n) ? 1 : 0;
        }
      }
    }
  }
  EXPECT_GT(repeating_without, 0) << "the models never repeat: no test";
}

TEST(ContinuousDecoderTest, RemovedBeamGroupLeavesWithAllItsRows) {
  Transformer model = testing_util::RandomTinyModel(10);
  ContinuousDecoder decoder(*model, Limits());
  const auto handles =
      decoder.Add({{kSources[0], 3}, {kSources[1], 1}, {kSources[3], 4}});
  EXPECT_EQ(decoder.rows(), 3);  // One row each until the first step.
  decoder.Step();
  EXPECT_EQ(decoder.rows(), 8);
  decoder.Step();
  decoder.Remove({handles[0]});
  EXPECT_EQ(decoder.rows(), 5);
  std::map<int64_t, std::vector<int64_t>> results;
  while (decoder.active() > 0) {
    for (auto& sentence : decoder.Step()) {
      results[sentence.handle] = sentence.target_ids;
    }
  }
  EXPECT_EQ(results.count(handles[0]), 0u);
  EXPECT_EQ(results.at(handles[1]), BeamAlone(*model, kSources[1], 1));
  EXPECT_EQ(results.at(handles[2]), BeamAlone(*model, kSources[3], 4));
}

// A failing admission (here a source id the embedding does not have) adds
// nothing, and the sentences already decoding go on exactly as before.
TEST(ContinuousDecoderTest, FailedAddLeavesRunningSentencesUntouched) {
  Transformer model = testing_util::RandomTinyModel(11);
  ContinuousDecoder decoder(*model, Limits());
  const auto handles = decoder.Add({{kSources[0], 2}, {kSources[2], 1}});
  decoder.Step();
  EXPECT_THROW(decoder.Add({{kSources[1], 1}, {{5, 1000000}, 2}}),
               std::exception);
  EXPECT_THROW(decoder.Add({{kSources[1], 0}}), std::invalid_argument);
  EXPECT_EQ(decoder.active(), 2);
  EXPECT_EQ(decoder.rows(), 3);
  std::map<int64_t, std::vector<int64_t>> results;
  while (decoder.active() > 0) {
    for (auto& sentence : decoder.Step()) {
      results[sentence.handle] = sentence.target_ids;
    }
  }
  EXPECT_EQ(results.at(handles[0]), BeamAlone(*model, kSources[0], 2));
  EXPECT_EQ(results.at(handles[1]), BeamAlone(*model, kSources[2], 1));
}

}  // namespace
}  // namespace fanyi
