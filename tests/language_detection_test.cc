#include "common/text/language_detection.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace fanyi {
namespace {

const std::vector<std::string> kEnglishAndChinese = {"en", "zh"};

TEST(LanguageDetectionTest, FindsEnglishAndChineseInEitherScript) {
  const struct {
    const char* text;
    const char* language;
  } cases[] = {
      {"The weather is lovely today, so we are going for a walk in the park.",
       "en"},
      {"今天天气很好，我们去公园散步吧。", "zh"},
      {"今天天氣很好，我們去公園散步吧。", "zh"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const std::vector<DetectedLanguage> detected =
        DetectLanguages(c.text, kEnglishAndChinese);
    ASSERT_FALSE(detected.empty());
    EXPECT_EQ(detected.front().language, c.language);
    EXPECT_GT(detected.front().confidence, 50);
    EXPECT_LE(detected.front().confidence, 100);
  }
}

TEST(LanguageDetectionTest, AMixedTextRanksBothLanguages) {
  const std::vector<DetectedLanguage> detected = DetectLanguages(
      "The weather is lovely today and we are going for a long walk. "
      "今天天气很好，我们去公园散步吧，然后去吃饭。",
      kEnglishAndChinese);
  ASSERT_EQ(detected.size(), 2u);
  EXPECT_GE(detected[0].confidence, detected[1].confidence);
  EXPECT_LE(detected[0].confidence + detected[1].confidence, 100);
}

TEST(LanguageDetectionTest, OnlyCandidatesAreAnswered) {
  // French, with only English and Chinese served: the script decides.
  const std::vector<DetectedLanguage> french = DetectLanguages(
      "Le temps est magnifique aujourd'hui, allons nous promener au parc.",
      kEnglishAndChinese);
  ASSERT_EQ(french.size(), 1u);
  EXPECT_EQ(french.front().language, "en");
  // A text too short for CLD2 falls back on its script too.
  EXPECT_EQ(DetectLanguages("好", kEnglishAndChinese).front().language, "zh");
  EXPECT_EQ(DetectLanguages("Hi", kEnglishAndChinese).front().language, "en");
  EXPECT_EQ(DetectLanguages("Hi", {"zh"}).front().language, "zh");
  EXPECT_TRUE(DetectLanguages("Hi", {}).empty());
}

TEST(LanguageDetectionTest, InvalidUtf8IsRefused) {
  EXPECT_THROW(DetectLanguages("caf\xC3", kEnglishAndChinese),
               std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
