#include "common/text/tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/text/utf8.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using Tokens = std::vector<std::string>;

struct TokenizeCase {
  std::string language;
  std::string text;
  Tokens expected;
};

class TokenizeTest : public testing::TestWithParam<TokenizeCase> {};

TEST_P(TokenizeTest, SplitsAsExpected) {
  const TokenizeCase& c = GetParam();
  EXPECT_EQ(Tokenizer(c.language).Tokenize(c.text), c.expected) << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    English, TokenizeTest,
    testing::Values(
        TokenizeCase{
            "en", "Anyone can do that.", {"anyone", "can", "do", "that", "."}},
        TokenizeCase{"en", "I don't know.", {"i", "do", "n't", "know", "."}},
        TokenizeCase{"en", "can't won't", {"ca", "n't", "wo", "n't"}},
        TokenizeCase{"en", "It's Tom's.", {"it", "'s", "tom", "'s", "."}},
        TokenizeCase{"en",
                     "We're sure I've seen you'll go, I'd say I'm",
                     {"we", "'re", "sure", "i", "'ve", "seen", "you", "'ll",
                      "go", ",", "i", "'d", "say", "i", "'m"}},
        TokenizeCase{"en", "shouldn't've", {"should", "n't", "'ve"}},
        TokenizeCase{"en", "It\xE2\x80\x99s", {"it", "\xE2\x80\x99s"}},
        TokenizeCase{"en", "at 3:30 o'clock", {"at", "3:30", "o'clock"}},
        TokenizeCase{
            "en",
            "It costs $3.50, or 1,000 yen!",
            {"it", "costs", "$", "3.50", ",", "or", "1,000", "yen", "!"}},
        TokenizeCase{
            "en", "A well-known fact...", {"a", "well-known", "fact", "..."}},
        TokenizeCase{"en",
                     "He said \"Hi\" (twice)?",
                     {"he", "said", "\"", "hi", "\"", "(", "twice", ")", "?"}},
        TokenizeCase{"en",
                     "\xE2\x80\x9CYes\xE2\x80\x9D",
                     {"\xE2\x80\x9C", "yes", "\xE2\x80\x9D"}},
        TokenizeCase{"en",
                     "Say \xE4\xBD\xA0\xE5\xA5\xBD now",
                     {"say", "\xE4\xBD\xA0", "\xE5\xA5\xBD", "now"}},
        TokenizeCase{"en",
                     "\xC3\x89"
                     "COLE \xCE\x91\xCE\x92 \xD0\x9C\xD0\x98\xD0\xA0",
                     {"\xC3\xA9"
                      "cole",
                      "\xCE\xB1\xCE\xB2", "\xD0\xBC\xD0\xB8\xD1\x80"}},
        TokenizeCase{"en", std::string("a\0b\x01 c\x7f", 7), {"a", "b", "c"}},
        TokenizeCase{"en", "  \t\n", {}}, TokenizeCase{"en", "", {}}));

INSTANTIATE_TEST_SUITE_P(
    Chinese, TokenizeTest,
    testing::Values(
        TokenizeCase{"zh",
                     "我喜欢Tom Jackson。",
                     {"我", "喜", "欢", "Tom", "Jackson", "。"}},
        TokenizeCase{"zh",
                     "他3:30到，花了3.5元！",
                     {"他", "3:30", "到", "，", "花", "了", "3.5", "元", "！"}},
        TokenizeCase{"zh",
                     "“你好”（DJ）《书》、Tom's",
                     {"“", "你", "好", "”", "（", "DJ", "）", "《", "书", "》",
                      "、", "Tom's"}},
        TokenizeCase{"zh", "等等……好...", {"等", "等", "……", "好", "..."}},
        TokenizeCase{
            "zh",
            "要不要再來一塊蛋糕？",
            {"要", "不", "要", "再", "來", "一", "塊", "蛋", "糕", "？"}},
        TokenizeCase{
            "ja", "これはペンです", {"こ", "れ", "は", "ペ", "ン", "で", "す"}},
        TokenizeCase{"zh",
                     "\xF0\xA0\x80\x80 a,b",
                     {"\xF0\xA0\x80\x80", "a", ",", "b"}}));

TEST(TokenizerTest, InvalidUtf8NamesTheByte) {
  const Tokenizer tokenizer("en");
  try {
    tokenizer.Tokenize("abc\xC3(");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "invalid UTF-8 at byte 3");
  }
}

TEST(TokenizerTest, RejectsMalformedUtf8InBothModes) {
  const std::vector<std::string> malformed = {
      "\x80",              // stray continuation byte
      "\xC0\xAF",          // overlong '/'
      "\xE0\x80\xAF",      // overlong
      "\xED\xA0\x80",      // surrogate
      "\xF4\x90\x80\x80",  // above U+10FFFF
      "\xE4\xBD",          // truncated
      "\xFF"};
  for (const char* language : {"en", "zh"}) {
    for (const std::string& text : malformed) {
      EXPECT_THROW(Tokenizer(language).Tokenize(text), std::invalid_argument)
          << language;
    }
  }
}

// The UTF-8 and character-class helpers the tokenizer is built on.
TEST(Utf8Test, EncodeDecodeRoundTripsBoundaryCodePoints) {
  const std::u32string code_points = {
      0x0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF};
  EXPECT_EQ(DecodeUtf8(EncodeUtf8(code_points)), code_points);
  EXPECT_THROW(EncodeUtf8(std::u32string(1, 0xD800)), std::invalid_argument);
  EXPECT_THROW(EncodeUtf8(std::u32string(1, 0x110000)), std::invalid_argument);
}

TEST(Utf8Test, CharacterClassesAndLowercase) {
  const std::vector<std::pair<char32_t, char32_t>> lower = {
      {'A', 'a'},       {'z', 'z'},       {0xC9, 0xE9},     {0xD7, 0xD7},
      {0x0100, 0x0101}, {0x0139, 0x013A}, {0x0178, 0xFF},   {0x0391, 0x03B1},
      {0x0401, 0x0451}, {0x041C, 0x043C}, {0xFF21, 0xFF41}, {0x4E2D, 0x4E2D}};
  for (const auto& [upper, expected] : lower) {
    EXPECT_EQ(ToLower(upper), expected) << static_cast<uint32_t>(upper);
  }
  EXPECT_TRUE(IsCjk(0x4E2D));
  EXPECT_TRUE(IsCjk(0x3042));
  EXPECT_TRUE(IsCjk(0xAC00));
  EXPECT_TRUE(IsCjk(0x20000));
  EXPECT_FALSE(IsCjk(0x3002));
  EXPECT_FALSE(IsCjk('a'));
  EXPECT_TRUE(IsLetterOrDigit('7'));
  EXPECT_TRUE(IsLetterOrDigit(0x00E9));
  EXPECT_FALSE(IsLetterOrDigit(0x4E2D));
  EXPECT_FALSE(IsLetterOrDigit('.'));
  EXPECT_TRUE(IsSpace(0x3000));
  EXPECT_TRUE(IsSpace(0x00A0));
  EXPECT_FALSE(IsSpace('x'));
  EXPECT_TRUE(IsControl(0));
  EXPECT_FALSE(IsControl('\n'));
}

TEST(TokenizerTest, WordModeKeepsCaseWhenAsked) {
  const Tokenizer cased("en", nullptr, WordCase::kKeep);
  EXPECT_FALSE(cased.lowercases());
  EXPECT_EQ(cased.Tokenize("The Cat's at NASA."),
            (Tokens{"The", "Cat", "'s", "at", "NASA", "."}));
  const Tokenizer lowered("en");
  EXPECT_TRUE(lowered.lowercases());
  EXPECT_EQ(lowered.Tokenize("The Cat's at NASA."),
            (Tokens{"the", "cat", "'s", "at", "nasa", "."}));
  // Characters are never lowercased.
  EXPECT_FALSE(Tokenizer("zh", nullptr, WordCase::kLower).lowercases());
  EXPECT_EQ(ParseWordCase(WordCaseName(WordCase::kKeep)), WordCase::kKeep);
  EXPECT_THROW(ParseWordCase("upper"), std::invalid_argument);
}

TEST(TokenizerTest, ReportsItsMode) {
  EXPECT_TRUE(Tokenizer("zh").character_mode());
  EXPECT_TRUE(Tokenizer("yue").character_mode());
  EXPECT_FALSE(Tokenizer("en").character_mode());
  EXPECT_EQ(Tokenizer("en").language(), "en");
}

struct DetokenizeCase {
  std::string language;
  Tokens tokens;
  std::string expected;
};

class DetokenizeTest : public testing::TestWithParam<DetokenizeCase> {};

TEST_P(DetokenizeTest, JoinsAsExpected) {
  const DetokenizeCase& c = GetParam();
  EXPECT_EQ(Tokenizer(c.language).Detokenize(c.tokens), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    All, DetokenizeTest,
    testing::Values(
        DetokenizeCase{"zh",
                       {"我", "喜欢", "Tom", "Jackson", "。"},
                       "我喜欢Tom Jackson。"},
        DetokenizeCase{"zh", {"花", "了", "3.5", "元", "！"}, "花了3.5元！"},
        DetokenizeCase{"zh", {}, ""},
        DetokenizeCase{"en",
                       {"i", "do", "n't", "know", ",", "tom", "'s", "dog", "."},
                       "i don't know, tom's dog."},
        DetokenizeCase{"en",
                       {"he", "said", "\"", "hi", "\"", "(", "twice", ")", "?"},
                       "he said \"hi\" (twice)?"},
        DetokenizeCase{
            "en", {"it", "costs", "$", "3.50", "..."}, "it costs $3.50..."},
        DetokenizeCase{"en",
                       {"ca", "n't", "you", "'ll", "see", "100", "%"},
                       "can't you'll see 100%"},
        DetokenizeCase{"en", {"say", "你", "好", "now"}, "say 你好 now"}));

// Round trip: tokenizing and detokenizing a plain sentence gives it back.
TEST(TokenizerTest, RoundTripsSimpleSentences) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"en", "i don't think it's a well-known fact, do you?"},
      {"en", "we'll meet at 3:30 (sharp) and pay $1,000.50..."},
      {"zh", "我喜欢Tom Jackson。他3:30到，花了3.5元！"}};
  for (const auto& [language, text] : cases) {
    const Tokenizer tokenizer(language);
    EXPECT_EQ(tokenizer.Detokenize(tokenizer.Tokenize(text)), text);
  }
}

std::u32string NonSpaceCharacters(const std::string& text, bool lowercase) {
  std::u32string kept;
  for (char32_t c : DecodeUtf8(text)) {
    if (IsSpace(c) || IsControl(c)) continue;
    kept.push_back(lowercase ? ToLower(c) : c);
  }
  return kept;
}

// Property on real data: detokenize(tokenize(x)) keeps every non-space
// character of x (lowercased in word mode) in order.
TEST(TokenizerTest, RoundTripKeepsCharactersOfTrainingData) {
  const std::string path = testing_util::SharedDataPath("en-zh/train.tsv");
  std::ifstream file(path);
  ASSERT_TRUE(file) << "cannot read " << path;
  const Tokenizer english("en");
  const Tokenizer chinese("zh");
  std::string line;
  int checked = 0;
  while (checked < 300 && std::getline(file, line)) {
    const std::size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string source = line.substr(0, tab);
    std::string target = line.substr(tab + 1);
    target = target.substr(0, target.find('\t'));
    EXPECT_EQ(
        NonSpaceCharacters(english.Detokenize(english.Tokenize(source)), false),
        NonSpaceCharacters(source, true))
        << source;
    EXPECT_EQ(
        NonSpaceCharacters(chinese.Detokenize(chinese.Tokenize(target)), false),
        NonSpaceCharacters(target, false))
        << target;
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

}  // namespace
}  // namespace fanyi
