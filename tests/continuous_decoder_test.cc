#include "common/decoding/continuous_decoder.h"

#include <gtest/gtest.h>

#include <map>

#include "common/decoding/greedy_decoder.h"
#include "common/model/transformer.h"
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
    source_of[decoder.Add({kSources[0]})[0]] = 0;
    collect();
    collect();
    const auto second = decoder.Add({kSources[1], kSources[2]});
    source_of[second[0]] = 1;
    source_of[second[1]] = 2;
    for (int i = 0; i < 4; ++i) collect();
    const auto third = decoder.Add({kSources[3], kSources[4]});
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
  const auto handles = decoder.Add(kSources);
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
  const int64_t again = decoder.Add({kSources[2]})[0];
  std::vector<int64_t> target;
  while (decoder.active() > 0) {
    for (auto& row : decoder.Step()) {
      if (row.handle == again) target = row.target_ids;
    }
  }
  EXPECT_EQ(target, GreedyDecodeWithoutCache(*model, kSources[2], Limits()));
}

}  // namespace
}  // namespace fanyi
