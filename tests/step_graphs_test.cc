// What CUDA graphs would do, measured on the CPU: a StepGraphs dry run
// (DecodingOptions::graph_dry_run) keys, captures and replays as on a GPU,
// and runs each step eagerly in the form a graph replays it (every storage
// column, the batch padded to a power of two). Its translations are the
// plain step's, and rows leaving keep the graph's key.
#include "common/model/step_graphs.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "common/decoding/decoding_options.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"
#include "tests/random_model.h"

namespace fanyi {
namespace {

struct Decoded {
  std::map<int64_t, std::vector<int64_t>> translations;  // By handle.
  int64_t captures = 0;
  int64_t replays = 0;
  int64_t steps = 0;
};

// Sentences joining in waves while others decode (greedy, and beam 3 in
// every third wave when `beams`), leaving as they end, one removed; sources
// of different lengths, the longest joining late. Then, once the batch has
// emptied, a second round on the same decoder with more rows and longer
// sources than its caches hold.
Decoded DecodeInWaves(TransformerImpl& model, const DecodingOptions& options,
                      bool beams) {
  ContinuousDecoder decoder(model, options);
  Decoded run;
  auto step = [&] {
    for (ContinuousDecoder::Finished& done : decoder.Step()) {
      run.translations[done.handle] = std::move(done.target_ids);
    }
  };
  for (int64_t wave = 0; wave < 7; ++wave) {
    const int beam = beams && wave % 3 == 2 ? 3 : 1;
    std::vector<EncodedSource> sources = {
        {{5 + wave, 6, 7}, beam},
        {{8, 9 + wave}, 1},
        {std::vector<int64_t>(wave == 4 ? 14 : 1 + wave, 10 + wave), 1}};
    const std::vector<int64_t> handles = decoder.Add(sources);
    step();
    if (wave == 3) decoder.Remove({handles[2]});
    step();
  }
  while (decoder.active() > 0) step();
  std::vector<EncodedSource> second;
  for (int64_t i = 0; i < 24; ++i) {
    second.push_back({std::vector<int64_t>(3 + i, 4 + i % 19), 1});
  }
  decoder.Add(second);
  while (decoder.active() > 0) step();
  if (const StepGraphs* graphs = decoder.graphs()) {
    run.captures = graphs->captures();
    run.replays = graphs->replays();
    run.steps = graphs->steps();
  }
  return run;
}

// A graph's step attends to every column of the storages and computes
// padding rows, yet every sentence gets the plain step's tokens, with beams
// reordering rows, windows of greedy steps, and rows of sources of every
// length joining and leaving.
TEST(StepGraphsTest, DryRunDecodesAsThePlainStep) {
  for (uint64_t seed : {11, 12, 13}) {
    for (const bool beams : {false, true}) {
      for (const int64_t device_steps : {0, 4}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " beams " +
                     std::to_string(beams) + " device_steps " +
                     std::to_string(device_steps));
        Transformer model = testing_util::RandomTinyModel(seed);
        DecodingOptions options;
        options.max_length = 40;  // Past the first capacity, 16 columns.
        options.device_steps = device_steps;
        const Decoded plain = DecodeInWaves(*model, options, beams);
        options.graph_dry_run = true;
        const Decoded graphed = DecodeInWaves(*model, options, beams);
        EXPECT_EQ(graphed.translations, plain.translations);
        EXPECT_EQ(plain.translations.size(), 44u);
        EXPECT_GT(graphed.replays, 0);
        EXPECT_EQ(plain.steps, 0);  // No graphs without the dry run.
      }
    }
  }
}

// Sentences of one source length ending at different steps (a model that
// favours </s>) leave the batch one by one, and the graph's key changes only
// when the batch crosses a power of two: the captures and replays are those
// of a key made of that power alone, under StepGraphs' rule (a key is
// captured at its third call, replayed from then on). Then the same
// sentences again, with the caches kept: every step replays.
TEST(StepGraphsTest, RowsLeavingKeepTheKeyWithinAPowerOfTwo) {
  Transformer model = testing_util::RandomEndingModel(21, 1.0);
  DecodingOptions options;
  options.max_length = 12;  // Within the first 16 columns: one layout.
  options.graph_dry_run = true;
  ContinuousDecoder decoder(*model, options);
  std::vector<EncodedSource> sources;
  for (int64_t i = 0; i < 8; ++i) sources.push_back({{5 + i, 6, 7 + i}, 1});
  std::set<int64_t> batch_sizes;
  int64_t expected_captures = 0;
  int64_t expected_replays = 0;
  std::map<int64_t, int64_t> calls;  // By power of two.
  std::set<int64_t> captured;
  // Decodes `sources` and predicts the captures and replays.
  auto decode = [&] {
    decoder.Add(sources);
    int64_t steps = 0;
    while (decoder.active() > 0) {
      batch_sizes.insert(decoder.rows());
      int64_t power = 1;
      while (power < decoder.rows()) power *= 2;
      if (captured.count(power) > 0) {
        ++expected_replays;
      } else if (++calls[power] >= 3) {
        captured.insert(power);
        ++expected_captures;
        ++expected_replays;
      }
      decoder.Step();
      ++steps;
    }
    return steps;
  };
  const int64_t steps = decode();
  ASSERT_GE(batch_sizes.size(), 4u) << "rows left at too few steps";
  const StepGraphs& graphs = *decoder.graphs();
  EXPECT_EQ(graphs.captures(), expected_captures);
  EXPECT_EQ(graphs.replays(), expected_replays);
  EXPECT_GT(graphs.replays(), 0);
  // Fewer keys than batch sizes: a key made of the batch itself would
  // capture more.
  EXPECT_LT(static_cast<size_t>(graphs.captures()), batch_sizes.size());

  // The batch emptied and its caches stayed: the same sentences again come
  // at the same keys, and replay more.
  const int64_t first_replays = graphs.replays();
  EXPECT_EQ(decode(), steps);
  EXPECT_EQ(graphs.captures(), expected_captures);
  EXPECT_EQ(graphs.replays(), expected_replays);
  EXPECT_GT(graphs.replays() - first_replays, first_replays);
}

// A source that overflows (an embedding of inf, as half precision can
// reach on hostile input) puts no NaN in the caches: the sentences decoded
// after it, in the same batch and in the next one, whose graph steps read
// its entries under their masks, translate as they do in a plain step.
TEST(StepGraphsTest, AnOverflowingSourceSpoilsNoLaterSentence) {
  Transformer model = testing_util::RandomTinyModel(31);
  {
    torch::NoGradGuard no_grad;
    model->named_parameters()["source_embedding.weight"][22].fill_(
        std::numeric_limits<double>::infinity());
  }
  auto decode = [&](bool dry_run) {
    DecodingOptions options;
    options.max_length = 12;
    options.graph_dry_run = dry_run;
    ContinuousDecoder decoder(*model, options);
    std::map<int64_t, std::vector<int64_t>> translations;
    auto finish = [&] {
      while (decoder.active() > 0) {
        for (auto& done : decoder.Step()) {
          translations[done.handle] = std::move(done.target_ids);
        }
      }
    };
    // The poisoned source, longest, leaves first; then a new batch.
    decoder.Add({{{22, 22, 22, 22, 22, 22, 22, 22, 22}, 1}, {{5, 6}, 1}});
    decoder.Step();
    decoder.Add({{{7, 8, 9}, 1}});
    finish();
    decoder.Add({{{10, 11}, 1}, {{12, 13, 14, 15}, 1}});
    finish();
    translations.erase(0);  // The poisoned sentence's own.
    return translations;
  };
  const auto plain = decode(false);
  EXPECT_EQ(plain.size(), 4u);
  EXPECT_EQ(decode(true), plain);
}

}  // namespace
}  // namespace fanyi
