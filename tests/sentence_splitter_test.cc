#include "common/text/sentence_splitter.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace fanyi {
namespace {

using Strings = std::vector<std::string>;

// Splitting and joining back with the gaps as they were gives the text.
std::string Rejoin(const SplitText& split) {
  std::string text = split.gaps.front();
  for (std::size_t i = 0; i < split.sentences.size(); ++i) {
    text += split.sentences[i] + split.gaps[i + 1];
  }
  return text;
}

struct SplitCase {
  std::string text;
  Strings sentences;
};

class SplitTest : public testing::TestWithParam<SplitCase> {};

TEST_P(SplitTest, FindsTheSentences) {
  const SplitCase& c = GetParam();
  const SplitText split = SentenceSplitter("en").Split(c.text);
  EXPECT_EQ(split.sentences, c.sentences) << c.text;
  ASSERT_EQ(split.gaps.size(), split.sentences.size() + 1);
  EXPECT_EQ(Rejoin(split), c.text);
}

INSTANTIATE_TEST_SUITE_P(
    English, SplitTest,
    testing::Values(
        SplitCase{"Tom went to the store. He bought some milk. Then he went "
                  "home.",
                  {"Tom went to the store.", "He bought some milk.",
                   "Then he went home."}},
        // Abbreviations from CLDR do not end a sentence; numbers and
        // addresses with dots stay whole.
        SplitCase{
            "Mr. Smith paid $2.50 at www.example.com today. Did he?",
            {"Mr. Smith paid $2.50 at www.example.com today.", "Did he?"}},
        // Unicode's rules end a sentence at "?" even inside a URL; a break
        // with no space around it is not taken.
        SplitCase{"See https://x.org/a?b=1 now. Mail me!Ok.",
                  {"See https://x.org/a?b=1 now.", "Mail me!Ok."}},
        SplitCase{"Bring fruit, e.g. apples. Thanks!",
                  {"Bring fruit, e.g. apples.", "Thanks!"}},
        // CLDR's list holds ordinary words, acronyms and units too: after
        // those a sentence ends.
        SplitCase{"Go. Go. Go. Go.", {"Go.", "Go.", "Go.", "Go."}},
        SplitCase{"Go. Run. Stop.", {"Go.", "Run.", "Stop."}},
        SplitCase{"OK. I saw a UFO. It is 5 Mb. Then Mt. Fuji.",
                  {"OK.", "I saw a UFO.", "It is 5 Mb.", "Then Mt. Fuji."}},
        // A text that ends in an abbreviation keeps its last sentence.
        SplitCase{"Hello. Call Mr.", {"Hello.", "Call Mr."}},
        SplitCase{"Prof.", {"Prof."}},
        // Unicode's rules end a sentence at a question mark even inside
        // quotes; an ellipsis before a lowercase word does not end one.
        SplitCase{"\"Is it late?\" she asked. Wait... what?",
                  {"\"Is it late?\"", "she asked.", "Wait... what?"}},
        // A line break ends a sentence even without punctuation.
        SplitCase{"Dear Tom\nThanks for the book.\n\nBest,\nMary\n",
                  {"Dear Tom", "Thanks for the book.", "Best,", "Mary"}},
        SplitCase{"  \n", {}}, SplitCase{"", {}}));

TEST(SentenceSplitterTest, FullWidthStopsEndChineseSentencesBeforeLatin) {
  const SentenceSplitter chinese("zh");
  EXPECT_EQ(chinese.Split("我爱你。Tom是我的朋友。").sentences,
            (Strings{"我爱你。", "Tom是我的朋友。"}));
  EXPECT_EQ(chinese.Split("他生于1990年。1990年是个好年。").sentences,
            (Strings{"他生于1990年。", "1990年是个好年。"}));
  EXPECT_EQ(chinese.Split("真的吗？OK！好。").sentences,
            (Strings{"真的吗？", "OK！", "好。"}));
  // A Latin full stop between Latin characters is still no break.
  EXPECT_EQ(chinese.Split("请访问example.com。谢谢。").sentences,
            (Strings{"请访问example.com。", "谢谢。"}));
}

TEST(SentenceSplitterTest, RefusesInvalidUtf8) {
  EXPECT_THROW(SentenceSplitter("en").Split("ok \xff"), std::invalid_argument);
}

TEST(JoinSentencesTest, KeepsLineBreaksAndJoinsChineseWithoutSpaces) {
  const SplitText split = SentenceSplitter("en").Split(
      "\nHello there. How are you?\r\n\r\n  I am fine.\n");
  ASSERT_EQ(split.sentences.size(), 3u);
  EXPECT_EQ(JoinSentences(split, {"你好。", "你好吗？", "我很好。"}, ""),
            "\n你好。你好吗？\r\n\r\n我很好。\n");
  EXPECT_EQ(JoinSentences(split, {"A.", "B?", "C."}, " "),
            "\nA. B?\r\n\r\nC.\n");
}

TEST(JoinSentencesTest, RefusesAWrongCount) {
  const SplitText split = SentenceSplitter("en").Split("One. Two.");
  EXPECT_THROW(JoinSentences(split, {"一。"}, ""), std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
