#include "common/eval/bleu.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace fanyi {
namespace {

using Strings = std::vector<std::string>;

TEST(BleuTest, PerfectMatchScores100) {
  const BleuScore bleu =
      CorpusBleu({"The cat sat on the mat.", "我喜欢你。"},
                 {"The cat sat on the mat.", "我喜欢你。"}, BleuTokenizer::kZh);
  EXPECT_DOUBLE_EQ(bleu.score, 100.0);
  for (double precision : bleu.precisions) EXPECT_DOUBLE_EQ(precision, 100.0);
  EXPECT_DOUBLE_EQ(bleu.brevity_penalty, 1.0);
  EXPECT_EQ(bleu.hypothesis_length, 12);
  EXPECT_EQ(bleu.reference_length, 12);
  EXPECT_DOUBLE_EQ(CorpusChrf({"我喜欢你。"}, {"我 喜欢 你。"}), 100.0);
}

TEST(BleuTest, NoOverlapScoresZero) {
  const BleuScore bleu =
      CorpusBleu({"a b c d"}, {"e f g h"}, BleuTokenizer::k13a);
  EXPECT_EQ(bleu.score, 0.0);
  EXPECT_EQ(bleu.precisions[0], 0.0);
  EXPECT_EQ(CorpusChrf({"abcd"}, {"efgh"}), 0.0);
  EXPECT_EQ(CorpusBleu({""}, {"a b"}, BleuTokenizer::k13a).score, 0.0);
}

TEST(BleuTest, BrevityPenaltyWhenHypothesisIsShorter) {
  const BleuScore bleu = CorpusBleu({"the cat sat on the mat"},
                                    {"the cat sat on the mat today in the sun"},
                                    BleuTokenizer::k13a);
  const double expected_penalty = std::exp(1.0 - 10.0 / 6.0);
  EXPECT_DOUBLE_EQ(bleu.brevity_penalty, expected_penalty);
  EXPECT_NEAR(bleu.score, 100.0 * expected_penalty, 1e-9);
  EXPECT_EQ(bleu.hypothesis_length, 6);
  EXPECT_EQ(bleu.reference_length, 10);
}

TEST(BleuTest, ExpSmoothingForMissingFourGrams) {
  // 1-grams 3/4, 2-grams 2/3, 3-grams 1/2, 4-grams 0/1 -> 100 / (2 * 1).
  const BleuScore bleu =
      CorpusBleu({"a b c d"}, {"a b c e"}, BleuTokenizer::k13a);
  EXPECT_DOUBLE_EQ(bleu.precisions[0], 75.0);
  EXPECT_DOUBLE_EQ(bleu.precisions[1], 200.0 / 3.0);
  EXPECT_DOUBLE_EQ(bleu.precisions[2], 50.0);
  EXPECT_DOUBLE_EQ(bleu.precisions[3], 50.0);
  const double expected = std::exp(
      (std::log(75.0) + std::log(200.0 / 3.0) + 2 * std::log(50.0)) / 4.0);
  EXPECT_NEAR(bleu.score, expected, 1e-9);
}

TEST(BleuTest, RejectsMismatchedSizesAndInvalidUtf8) {
  EXPECT_THROW(CorpusBleu({"a"}, {"a", "b"}, BleuTokenizer::k13a),
               std::invalid_argument);
  EXPECT_THROW(CorpusChrf({"a", "b"}, {"a"}), std::invalid_argument);
  EXPECT_THROW(CorpusBleu({"a\xFF"}, {"a"}, BleuTokenizer::kZh),
               std::invalid_argument);
  EXPECT_THROW(CorpusChrf({"a"}, {"\xE4\xBD"}), std::invalid_argument);
}

TEST(BleuTest, TokenizerForLanguage) {
  EXPECT_EQ(BleuTokenizerForLanguage("zh"), BleuTokenizer::kZh);
  EXPECT_EQ(BleuTokenizerForLanguage("zh-TW"), BleuTokenizer::kZh);
  EXPECT_EQ(BleuTokenizerForLanguage("en"), BleuTokenizer::k13a);
  EXPECT_EQ(BleuTokenizerForLanguage("de"), BleuTokenizer::k13a);
}

struct TokenizeCase {
  BleuTokenizer tokenizer;
  std::string text;
  std::string expected;  // tokens joined by single spaces
};

class TokenizeForBleuTest : public testing::TestWithParam<TokenizeCase> {};

TEST_P(TokenizeForBleuTest, MatchesSacrebleu) {
  const TokenizeCase& c = GetParam();
  std::string joined;
  for (const std::string& token : TokenizeForBleu(c.text, c.tokenizer)) {
    if (!joined.empty()) joined += ' ';
    joined += token;
  }
  EXPECT_EQ(joined, c.expected);
}

// Expected strings printed by sacrebleu 2.6.0:
// Tokenizer13a()(text.rstrip()) and TokenizerZh()(text.rstrip()).
INSTANTIATE_TEST_SUITE_P(
    All, TokenizeForBleuTest,
    testing::Values(
        TokenizeCase{BleuTokenizer::k13a,
                     "Hello, world! It's 3.5-4 (approx.)...",
                     "Hello , world ! It's 3.5 - 4 ( approx . ) . . ."},
        TokenizeCase{BleuTokenizer::k13a, "a&amp;b &lt;x&gt; <skipped>y",
                     "a & b < x > y"},
        TokenizeCase{BleuTokenizer::k13a, "1,000.5 e.g. U.S.A.",
                     "1,000.5 e . g . U . S . A ."},
        TokenizeCase{BleuTokenizer::kZh, "我喜欢Tom Jackson。",
                     "我 喜 欢 Tom Jackson 。"},
        // U+2026 and curly quotes count as Chinese in sacreBLEU, the
        // Extension B character U+20000 does not.
        TokenizeCase{BleuTokenizer::kZh, "他说：“3.5元…”\xF0\xA0\x80\x80字",
                     "他 说 ： “ 3.5 元 … ” \xF0\xA0\x80\x80 字"},
        TokenizeCase{BleuTokenizer::kZh, "  ＡＢ１２，ok. ",
                     "Ａ Ｂ １ ２ ， ok ."}));

const Strings kChineseHypotheses = {
    "我喜欢Tom Jackson。",      "他在3:30到了，花了3.5元。",
    "“你好，”她说。",           "要不要再来一块蛋糕？",
    "汤姆和玛丽都不会说法语。", "这本书是1,000元……太贵了!"};
const Strings kChineseReferences = {
    "我很喜欢Tom Jackson！",  "他3:30到的，花了3.5元。",
    "她说：“你好。”",         "要不要再來一塊蛋糕？",
    "汤姆和玛丽都不说法语。", "这本书要1000元，太贵了！"};
const Strings kEnglishHypotheses = {
    "I don't know what Tom's doing.", "It costs $3.50, or about 1,000 yen.",
    "She said &quot;hello&quot; at 5-6 pm.", "The well-known fact is true"};
const Strings kEnglishReferences = {
    "I don't know what Tom is doing.", "It costs $3.50 (about 1,000 yen).",
    "She said \"hello\" at 5 pm.", "It is a well-known fact."};

struct SacrebleuCase {
  std::string name;
  const Strings* hypotheses;
  const Strings* references;
  BleuTokenizer tokenizer;
  double score;
  std::array<double, 4> precisions;
  int64_t hypothesis_length;
  int64_t reference_length;
};

class SacrebleuTest : public testing::TestWithParam<SacrebleuCase> {};

TEST_P(SacrebleuTest, MatchesCorpusBleu) {
  const SacrebleuCase& c = GetParam();
  const BleuScore bleu = CorpusBleu(*c.hypotheses, *c.references, c.tokenizer);
  EXPECT_NEAR(bleu.score, c.score, 1e-9);
  for (int n = 0; n < 4; ++n) {
    EXPECT_NEAR(bleu.precisions[n], c.precisions[n], 1e-9) << n;
  }
  EXPECT_DOUBLE_EQ(bleu.brevity_penalty, 1.0);
  EXPECT_EQ(bleu.hypothesis_length, c.hypothesis_length);
  EXPECT_EQ(bleu.reference_length, c.reference_length);
}

// Expected values from sacrebleu 2.6.0:
// sacrebleu.corpus_bleu(hypotheses, [references], tokenize='zh' or '13a').
INSTANTIATE_TEST_SUITE_P(
    All, SacrebleuTest,
    testing::Values(
        SacrebleuCase{"chinese_zh",
                      &kChineseHypotheses,
                      &kChineseReferences,
                      BleuTokenizer::kZh,
                      47.57734954279758,
                      {80.32786885245902, 58.18181818181818, 42.857142857142854,
                       25.58139534883721},
                      61,
                      59},
        // Too few 4-grams: the 4-gram precision is 0 and so is BLEU.
        SacrebleuCase{"chinese_13a",
                      &kChineseHypotheses,
                      &kChineseReferences,
                      BleuTokenizer::k13a,
                      0.0,
                      {10.0, 12.5, 25.0, 0.0},
                      10,
                      9},
        SacrebleuCase{
            "english_13a",
            &kEnglishHypotheses,
            &kEnglishReferences,
            BleuTokenizer::k13a,
            47.93200209614436,
            {78.78787878787878, 58.62068965517241, 40.0, 28.571428571428573},
            33,
            33}),
    [](const testing::TestParamInfo<SacrebleuCase>& info) {
      return info.param.name;
    });

// Expected values from sacrebleu 2.6.0:
// sacrebleu.corpus_chrf(hypotheses, [references]).score.
TEST(BleuTest, ChrfMatchesSacrebleu) {
  EXPECT_NEAR(CorpusChrf(kChineseHypotheses, kChineseReferences),
              51.891698976948675, 1e-9);
  EXPECT_NEAR(CorpusChrf(kEnglishHypotheses, kEnglishReferences),
              69.40383402713005, 1e-9);
}

}  // namespace
}  // namespace fanyi
