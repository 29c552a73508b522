// OutputGuard: which translations it takes as broken (table-driven, on
// vocabularies made here), and, on a real tiny model, the Translator's
// second decoding of the parts it finds broken.
#include "common/pipeline/output_guard.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/pipeline/translator.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

TEST(OutputGuardTest, LoopsAreFourCopiesOfATokenOrThreeOfAnNgram) {
  const struct {
    std::vector<int64_t> ids;
    bool loop;
  } cases[] = {
      {{}, false},
      {{5, 6, 7, 8}, false},
      {{5, 5, 5}, false},
      {{9, 5, 5, 5, 5}, true},
      {{5, 6, 5, 6}, false},
      {{5, 6, 5, 6, 5, 6}, true},
      {{4, 5, 6, 7, 5, 6, 7, 5, 6, 7, 8}, true},
      // Eight-token n-grams are the longest looked for.
      {{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8},
       true},
      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5,
        6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9},
       false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(HasLoop(c.ids), c.loop) << ::testing::PrintToString(c.ids);
  }
}

// Source words 4-9, target tokens 4-11: "tom" and "boston" are in both, as
// are "library", "system" and "error" (copied through untranslated).
class OutputGuardCases : public ::testing::Test {
 protected:
  static Vocabulary Words(std::vector<std::string> words) {
    std::vector<std::string> tokens = {"<pad>", "<unk>", "<s>", "</s>"};
    tokens.insert(tokens.end(), words.begin(), words.end());
    return Vocabulary(tokens);
  }

  OutputGuard Guard(LengthRatio ratio = {0.5, 3.0}) const {
    DecodingOptions decoding;
    decoding.length_ratio = 2;
    decoding.length_offset = 10;
    return OutputGuard(Words({"tom", "went", "to", "boston", "library",
                              "system", "error", "▁and", "12"}),
                       Words({"汤", "去", "了", "tom", "boston", "▁library",
                              "system@@", "error", "12"}),
                       ratio, decoding, true);
  }

  static DecodedPart Part(std::vector<int64_t> ids, double log_probability) {
    DecodedPart part{0, std::move(ids)};
    part.log_probability = log_probability;
    part.scored_tokens = static_cast<int64_t>(part.target_ids.size()) + 1;
    return part;
  }
};

TEST_F(OutputGuardCases, FindsLoopsLengthsAndCopies) {
  const OutputGuard guard = Guard();
  const EncodedSource tom_went_to_boston{{4, 5, 6, 7, 6}, 1};
  const struct {
    EncodedSource source;
    std::vector<int64_t> target;
    BrokenOutput broken;
  } cases[] = {
      {tom_went_to_boston, {7, 5, 6, 8}, BrokenOutput::kNone},
      {tom_went_to_boston, {7, 5, 5, 5, 5, 6}, BrokenOutput::kRepeats},
      // A loop the source has may stay.
      {{{4, 4, 4, 4, 5}, 1}, {7, 7, 7, 7}, BrokenOutput::kNone},
      // Above 3 target tokens per source token.
      {tom_went_to_boston,
       {4, 5, 6, 4, 5, 7, 4, 6, 5, 7, 6, 4, 5, 7, 4, 6},
       BrokenOutput::kTooLong},
      // Below 0.5: two tokens for five.
      {tom_went_to_boston, {4, 5}, BrokenOutput::kTooShort},
      // Short sources are not length-checked.
      {{{4, 5, 6}, 1}, {4}, BrokenOutput::kNone},
      // Names are no copy; most of the source's words are ("▁" and "@@"
      // marks and case aside), but numbers are no words.
      {{{4, 5, 6, 7, 12}, 1}, {7, 8, 5, 6, 12}, BrokenOutput::kNone},
      {{{8, 9, 10, 11, 12}, 1}, {9, 10, 11, 8, 12}, BrokenOutput::kCopied},
  };
  int index = 0;
  for (const auto& c : cases) {
    EXPECT_EQ(guard.Inspect(c.source, Part(c.target, -1)), c.broken)
        << "case " << index;
    ++index;
  }
  // Without a known ratio, only the length cap (2 · 5 + 10 = 20 tokens)
  // bounds the length.
  const OutputGuard unknown_ratio = Guard({0, 0});
  EXPECT_EQ(unknown_ratio.Inspect(tom_went_to_boston, Part({4, 5}, -1)),
            BrokenOutput::kNone);
  std::vector<int64_t> capped;  // No loop: a cycle of nine tokens.
  for (int64_t i = 0; i < 20; ++i) capped.push_back(4 + i % 9);
  EXPECT_EQ(unknown_ratio.Inspect(tom_went_to_boston, Part(capped, -1)),
            BrokenOutput::kTooLong);
  capped.pop_back();
  EXPECT_EQ(unknown_ratio.Inspect(tom_went_to_boston, Part(capped, -1)),
            BrokenOutput::kNone);
}

TEST_F(OutputGuardCases, RetriesLoopsWithoutRepeatsAndTheRestWider) {
  const EncodedSource greedy{{4, 5, 6}, 1, 0};
  for (BrokenOutput loop : {BrokenOutput::kRepeats, BrokenOutput::kTooLong}) {
    const std::optional<EncodedSource> retry =
        OutputGuard::Retry(greedy, loop, 8);
    ASSERT_TRUE(retry.has_value());
    EXPECT_EQ(retry->ids, greedy.ids);
    EXPECT_EQ(retry->beam_size, OutputGuard::kRetryBeam);
    EXPECT_EQ(retry->no_repeat_ngram, OutputGuard::kRetryNoRepeatNgram);
    // Within the server's widest beam; a wider one stays as wide.
    EXPECT_EQ(OutputGuard::Retry(greedy, loop, 2)->beam_size, 2);
    EXPECT_EQ(OutputGuard::Retry(greedy, loop, 0)->beam_size, 1);
    EXPECT_EQ(OutputGuard::Retry({{4}, 6, 2}, loop, 8)->beam_size, 6);
  }
  for (BrokenOutput other : {BrokenOutput::kTooShort, BrokenOutput::kCopied}) {
    const std::optional<EncodedSource> retry =
        OutputGuard::Retry(greedy, other, 8);
    ASSERT_TRUE(retry.has_value());
    EXPECT_EQ(retry->beam_size, OutputGuard::kRetryBeam);
    EXPECT_EQ(retry->no_repeat_ngram, 0);
    // A beam as wide already would decode the same again.
    EXPECT_FALSE(OutputGuard::Retry({{4}, 4, 0}, other, 8).has_value());
    EXPECT_FALSE(OutputGuard::Retry(greedy, other, 1).has_value());
  }
}

TEST_F(OutputGuardCases, KeepsTheRetryUnlessItIsBrokenAndLessLikely) {
  const OutputGuard guard = Guard();
  const EncodedSource source{{4, 5, 6, 7, 6}, 1};
  const DecodedPart loop = Part({7, 5, 5, 5, 5, 6}, -7);  // -1 a token.
  EXPECT_TRUE(guard.KeepsRetry(source, loop, Part({7, 5, 6, 8}, -50)));
  EXPECT_TRUE(guard.KeepsRetry(source, loop, Part({4, 5}, -1)));
  EXPECT_FALSE(guard.KeepsRetry(source, loop, Part({4, 5}, -6)));
}

// The tiny model, saying that its training pairs had far shorter
// translations than any it gives (CopyFindingEverythingTooLong).
std::string ModelExpectingShortTranslations() {
  static const std::string* dir = new std::string(
      testing_util::CopyFindingEverythingTooLong(testing_util::TrainTinyModel(
          testing_util::MakeTempDir("guard_model"))));
  return *dir;
}

TEST(OutputGuardTranslatorTest, BrokenPartsAreDecodedAgainWhenTheGuardIsOn) {
  TranslatorOptions options;
  options.device = "cpu";
  options.output_guard = false;
  const auto unguarded =
      Translator::Load(ModelExpectingShortTranslations(), options);
  options.output_guard = true;
  const auto guarded =
      Translator::Load(ModelExpectingShortTranslations(), options);
  // Training pairs (no loops, in the model's length) of six tokens and of
  // three: only the first is length-checked.
  const std::vector<std::string> texts = {"He had a hungry look.", "Have fun."};
  const std::vector<TextTranslation> off =
      unguarded->TranslateTexts(texts, TextOptions());
  const std::vector<TextTranslation> on =
      guarded->TranslateTexts(texts, TextOptions());
  ASSERT_EQ(off.size(), 2u);
  ASSERT_EQ(on.size(), 2u);
  // Off, the broken part is counted and kept.
  EXPECT_EQ(off[0].broken_part_count, 1);
  EXPECT_EQ(off[0].repaired_part_count, 0);
  EXPECT_EQ(off[1].broken_part_count, 0);
  // On, its retry (a beam of four that repeats no trigram) is too long as
  // well, and kept only when more likely per token.
  const EncodedSource first =
      guarded->pipeline().PrepareText(texts[0], TextOptions()).parts.at(0);
  const DecodedPart plain = guarded->DecodeParts({first}).at(0);
  const std::optional<EncodedSource> again =
      OutputGuard::Retry(first, BrokenOutput::kTooLong, 8);
  ASSERT_TRUE(again.has_value());
  const DecodedPart retry = guarded->DecodeParts({*again}).at(0);
  const bool kept = guarded->pipeline().guard().KeepsRetry(first, plain, retry);
  EXPECT_EQ(on[0].broken_part_count, 1);
  EXPECT_EQ(on[0].repaired_part_count, kept ? 1 : 0);
  std::vector<GuardVerdict> verdicts;
  const std::vector<DecodedPart> decoded =
      guarded->DecodeGuarded({first}, &verdicts);
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].broken, BrokenOutput::kTooLong);
  EXPECT_EQ(verdicts[0].kept_retry, kept);
  EXPECT_EQ(decoded[0].target_ids, kept ? retry.target_ids : plain.target_ids);
  EXPECT_EQ(on[1].text, off[1].text);
  EXPECT_EQ(on[1].broken_part_count, 0);
}

}  // namespace
}  // namespace fanyi
