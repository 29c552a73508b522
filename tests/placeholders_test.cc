#include "common/text/placeholders.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/text/aligned_placeholders.h"
#include "common/text/pair_masker.h"
#include "common/text/placeholder_masker.h"
#include "common/text/tokenizer.h"
#include "common/text/utf8.h"
#include "common/text/vocabulary.h"
#include "common/text/vocabulary_lookup.h"

namespace fanyi {
namespace {

using Strings = std::vector<std::string>;

struct MaskCase {
  std::string sentence;
  std::string masked;
  Strings restorations;
};

class MaskTest : public testing::TestWithParam<MaskCase> {};

TEST_P(MaskTest, ReplacesSpansInOrder) {
  const MaskCase& c = GetParam();
  const MaskedSentence masked = PlaceholderMasker({}, 8).Mask(c.sentence);
  EXPECT_EQ(masked.text, c.masked);
  EXPECT_EQ(masked.restorations, c.restorations);
}

INSTANTIATE_TEST_SUITE_P(
    Spans, MaskTest,
    testing::Values(
        MaskCase{"I bought 3 apples for $2.50 yesterday.",
                 "I bought ｟1｠ apples for ｟2｠ yesterday.",
                 {"3", "$2.50"}},
        MaskCase{"Meet me at 3:30 on 2024-05-01, gate B12.",
                 "Meet me at ｟1｠ on ｟2｠, gate ｟3｠.",
                 {"3:30", "2024-05-01", "B12"}},
        MaskCase{"Flight BA2490 costs 1,000 euros (15% off).",
                 "Flight ｟1｠ costs ｟2｠ euros (｟3｠ off).",
                 {"BA2490", "1,000", "15%"}},
        MaskCase{"See https://example.com/a?b=1. Mail tom.smith@example.co.uk!",
                 "See ｟1｠. Mail ｟2｠!",
                 {"https://example.com/a?b=1", "tom.smith@example.co.uk"}},
        MaskCase{"Go to www.fanyi.dev, then call +1 555-0100.",
                 "Go to ｟1｠, then call ｟2｠ ｟3｠.",
                 {"www.fanyi.dev", "+1", "555-0100"}},
        MaskCase{"No numbers here.", "No numbers here.", {}}));

TEST(PlaceholderMaskerTest, StopsAtTheLimit) {
  const MaskedSentence masked = PlaceholderMasker({}, 2).Mask("1 2 3 4");
  EXPECT_EQ(masked.text, "｟1｠ ｟2｠ 3 4");
  EXPECT_EQ(masked.restorations, (Strings{"1", "2"}));
}

TEST(PlaceholderMaskerTest, InlineMarkersComeFirstAndPastTheLimit) {
  // A document's tags must come back: its markers take the placeholders
  // before numbers do, and are masked even past the limit.
  const std::string a = EncodeUtf8(std::u32string(1, InlineMarker(0)));
  const std::string b = EncodeUtf8(std::u32string(1, InlineMarker(1)));
  const std::string c = EncodeUtf8(std::u32string(1, InlineMarker(2)));
  const MaskedSentence masked = PlaceholderMasker({}, 2).Mask(
      "See 1 " + a + "https://x.org" + b + " and 2" + c + ".");
  EXPECT_EQ(masked.text, "See 1 ｟1｠https://x.org｟2｠ and 2｟3｠.");
  EXPECT_EQ(masked.restorations, (Strings{a, b, c}));
}

TEST(PlaceholderMaskerTest, APlaceholdersFormInTheTextComesBackAsWritten) {
  // Masked like any span, so that the model's ｟1｠ is not the text's.
  const MaskedSentence masked =
      PlaceholderMasker({}, 8).Mask("I paid ｟1｠ and 5 dollars.", nullptr);
  EXPECT_EQ(masked.text, "I paid ｟1｠ and ｟2｠ dollars.");
  EXPECT_EQ(masked.restorations, (Strings{"｟1｠", "5"}));
  EXPECT_EQ(
      RestorePlaceholders("我付了｟1｠和｟2｠美元。", masked.restorations).text,
      "我付了｟1｠和5美元。");
  // Even on a model without placeholders: past the limit it still comes
  // back (appended), never as another span or nothing.
  const MaskedSentence unplaceable =
      PlaceholderMasker({}, 0).Mask("I paid ｟1｠.", nullptr);
  EXPECT_EQ(unplaceable.restorations, (Strings{"｟1｠"}));
  EXPECT_EQ(RestorePlaceholders("我付了。", unplaceable.restorations).text,
            "我付了｟1｠。");
}

// Template tokens are masked always, like inline markers: before numbers
// take the placeholders, and past the limit (then appended where the model
// leaves them out). Told not to, the masker leaves them as text.
TEST(PlaceholderMaskerTest, TemplateTokensAreAlwaysMasked) {
  const MaskedSentence masked = PlaceholderMasker({}, 3).Mask(
      "Visit %(url)s in 5 days to get {count} keys for 3 apps.");
  EXPECT_EQ(masked.text,
            "Visit ｟1｠ in ｟2｠ days to get ｟3｠ keys for 3 apps.");
  EXPECT_EQ(masked.restorations, (Strings{"%(url)s", "5", "{count}"}));
  const MaskedSentence unplaceable =
      PlaceholderMasker({}, 0).Mask("Missing %s parameter.", nullptr);
  EXPECT_EQ(unplaceable.restorations, (Strings{"%s"}));
  EXPECT_EQ(RestorePlaceholders("缺少参数。", unplaceable.restorations).text,
            "缺少参数%s。");
  const MaskedSentence off = PlaceholderMasker({}, 8, /*template_tokens=*/false)
                                 .Mask("Visit %(url)s in 5 days.");
  EXPECT_EQ(off.text, "Visit %(url)s in ｟1｠ days.");
}

// A span the model left out is appended after the spans placed, not into
// a placed span that ends in a closing sign (it once turned "{0}" into
// "{0 cats}"), and after one appended before it.
TEST(PlaceholderMaskerTest, UnplacedSpansGoAfterPlacedOnes) {
  const RestoredText restored =
      RestorePlaceholders("我有｟1｠", {"{0}", "cats", "(x)"});
  EXPECT_EQ(restored.text, "我有{0}cats(x)");
  EXPECT_EQ(restored.unplaced, 2);
  EXPECT_EQ(RestorePlaceholders("我有｟1｠。", {"{0}", "cats"}).text,
            "我有{0}cats。");
}

// In training pairs, a token written the same on both sides is masked on
// both, so that the model learns to carry it.
TEST(PairMaskerTest, TemplateTokensOnBothSidesBecomePlaceholders) {
  const MaskedPair pair = PairMasker(8).Mask("Delete %d files from {folder}?",
                                             "从{folder}删除%d个文件？", 0);
  EXPECT_EQ(pair.source, "Delete ｟1｠ files from ｟2｠?");
  EXPECT_EQ(pair.target, "从｟2｠删除｟1｠个文件？");
}

TEST(PlaceholderMaskerTest, GlossaryTermsMatchWholeWordsIgnoringCase) {
  const PlaceholderMasker masker(
      {{"machine translation", "机器翻译"}, {"fanyi", ""}, {"machine", "机器"}},
      8);
  const MaskedSentence masked = masker.Mask(
      "Fanyi does Machine Translation on 2 machines and a machine.");
  EXPECT_EQ(masked.text, "｟1｠ does ｟2｠ on ｟3｠ machines and a ｟4｠.");
  // A do-not-translate term comes back as written; the others as given.
  EXPECT_EQ(masked.restorations, (Strings{"Fanyi", "机器翻译", "2", "机器"}));
}

// A vocabulary of `words` as `tokenizer` splits them.
Vocabulary VocabularyOf(const Tokenizer& tokenizer, const std::string& words) {
  return Vocabulary::Build({tokenizer.Tokenize(words)}, 1, 0);
}

TEST(PlaceholderMaskerTest, UnknownWordsPassThroughWithoutTheirClitic) {
  const Tokenizer english("en");
  const Vocabulary vocabulary =
      VocabularyOf(english, "i met at the station 's .");
  const VocabularyLookup lookup(english, vocabulary, nullptr);
  const MaskedSentence masked = PlaceholderMasker({}, 8).Mask(
      "I met Zelensky's aide at the station.", &lookup);
  EXPECT_EQ(masked.text, "I met ｟1｠'s ｟2｠ at the station.");
  EXPECT_EQ(masked.restorations, (Strings{"Zelensky", "aide"}));
  EXPECT_EQ(masked.unknown_words, (Strings{"Zelensky", "aide"}));
}

TEST(PlaceholderMaskerTest,
     NumbersComeBeforeUnknownWordsWhenPlaceholdersRunOut) {
  const Tokenizer english("en");
  const Vocabulary vocabulary = VocabularyOf(english, "paid at .");
  const VocabularyLookup lookup(english, vocabulary, nullptr);
  const MaskedSentence masked =
      PlaceholderMasker({}, 2).Mask("Zed paid 5 at 3:30.", &lookup);
  EXPECT_EQ(masked.text, "Zed paid ｟1｠ at ｟2｠.");
  EXPECT_EQ(masked.restorations, (Strings{"5", "3:30"}));
  EXPECT_EQ(masked.unknown_words, (Strings{"Zed"}));
}

// A model whose source keeps its case knows "London" and "I" as written:
// they are translated, not passed through as unknown.
TEST(PlaceholderMaskerTest, ACasedSourceLooksWordsUpAsWritten) {
  const Tokenizer cased("en", nullptr, WordCase::kKeep);
  const Vocabulary vocabulary = VocabularyOf(cased, "I love London in May .");
  const VocabularyLookup lookup(cased, vocabulary, nullptr);
  const MaskedSentence masked =
      PlaceholderMasker({}, 8).Mask("I love London in may.", &lookup);
  EXPECT_EQ(masked.text, "I love London in ｟1｠.");
  EXPECT_EQ(masked.unknown_words, (Strings{"may"}));
}

TEST(PlaceholderMaskerTest, RefusesAnEmptyGlossaryTerm) {
  EXPECT_THROW(PlaceholderMasker({{"  ", "x"}}, 8), std::invalid_argument);
}

void ExpectPair(const MaskedPair& pair, const std::string& source,
                const std::string& target, int spans) {
  EXPECT_EQ(pair.source, source);
  EXPECT_EQ(pair.target, target);
  EXPECT_EQ(pair.spans, spans);
}

TEST(PlaceholderMaskerTest, MasksTrainingPairsOnlyWhereBothSidesHaveTheSpan) {
  const PairMasker masker(8);
  ExpectPair(masker.Mask("I owe him 1,000 dollars and 3 euros.",
                         "我欠他1000美元和三欧元。"),
             "I owe him ｟1｠ dollars and 3 euros.",
             "我欠他｟1｠美元和三欧元。", 1);
  // The target may put spans in another order; each keeps its number.
  ExpectPair(masker.Mask("Flight BA249 leaves at 10:30.", "10:30有BA249航班。"),
             "Flight ｟1｠ leaves at ｟2｠.", "｟2｠有｟1｠航班。", 2);
  ExpectPair(masker.Mask("I love my iPhone.", "我爱我的iPhone。"),
             "I love my ｟1｠.", "我爱我的｟1｠。", 1);
  ExpectPair(masker.Mask("I love tea.", "我爱茶。"), "I love tea.", "我爱茶。",
             0);
}

TEST(PlaceholderMaskerTest, TrainingPairsMayStartAtAnyIndexUpToTheLimit) {
  const PairMasker masker(4);
  ExpectPair(masker.Mask("Gate 5 at 10:30.", "10:30在5号门。", 2),
             "Gate ｟3｠ at ｟4｠.", "｟4｠在｟3｠号门。", 2);
  // Past the limit spans stay as text.
  ExpectPair(masker.Mask("Gate 5 at 10:30.", "10:30在5号门。", 3),
             "Gate ｟4｠ at 10:30.", "10:30在｟4｠号门。", 1);
}

TEST(PlaceholderIndexTest, ReadsOnlyPlaceholders) {
  EXPECT_EQ(PlaceholderIndex(PlaceholderToken(1)), 1);
  EXPECT_EQ(PlaceholderIndex(PlaceholderToken(12)), 12);
  for (const char* token : {"1", "｟｠", "｟a｠", "｟01｠", "｟1", "1｠"}) {
    EXPECT_EQ(PlaceholderIndex(token), 0) << token;
  }
}

TEST(PlaceholderIndexTest, TokenizersKeepAPlaceholderWhole) {
  EXPECT_EQ(Tokenizer("en").Tokenize("Pay ｟1｠, now."),
            (Strings{"pay", "｟1｠", ",", "now", "."}));
  EXPECT_EQ(Tokenizer("zh").Tokenize("我付了｟12｠元"),
            (Strings{"我", "付", "了", "｟12｠", "元"}));
}

TEST(RestorePlaceholdersTest, PutsEverySpanBackExactlyOnce) {
  const RestoredText restored = RestorePlaceholders(
      "我在｟2｠花了｟1｠，｟1｠｟7｠。", {"$2.50", "3:30"});
  EXPECT_EQ(restored.text, "我在3:30花了$2.50，。");
  EXPECT_EQ(restored.unplaced, 0);
}

TEST(RestorePlaceholdersTest, AppendsWhatTheModelLeftOutBeforeTheFullStop) {
  const RestoredText restored =
      RestorePlaceholders("我买了苹果。", {"3", "BA2490"});
  EXPECT_EQ(restored.text, "我买了苹果3 BA2490。");
  EXPECT_EQ(restored.unplaced, 2);
  EXPECT_EQ(RestorePlaceholders("I paid", {"5"}).text, "I paid 5");
}

// Placeholders through a model that never learned them: taken out of the
// source pieces, and put back before the piece aligned to the nearest
// source piece at or after where each stood.
TEST(AlignedPlaceholdersTest, TakesOutAndNamesEachPlaceholder) {
  std::vector<PlaceholderAnchor> anchors;
  EXPECT_EQ(
      TakeOutPlaceholders({"\u2581a", "｟1｠", "\u2581b", "｟2｠"}, &anchors),
      (Strings{"\u2581a", "\u2581b"}));
  ASSERT_EQ(anchors.size(), 2u);
  EXPECT_EQ(anchors[0].index, 1);
  EXPECT_EQ(anchors[0].before, 1);
  EXPECT_EQ(anchors[1].index, 2);
  EXPECT_EQ(anchors[1].before, 2);
}

TEST(AlignedPlaceholdersTest, PutsEachBackWhereTheAlignmentSays) {
  const std::string space = "\u2581";
  const Strings pieces = {space + "I", space + "saw", space + "the",
                          space + "cat"};
  // In order, and reordered: before the piece aligned to source piece 2.
  EXPECT_EQ(PutBackPlaceholders(pieces, {0, 1, 2, 3}, {{1, 2}}, true),
            (Strings{space + "I", space + "saw", space + "｟1｠", space + "the",
                     space + "cat"}));
  EXPECT_EQ(PutBackPlaceholders(pieces, {3, 2, 1, 0}, {{1, 2}}, true),
            (Strings{space + "I", space + "｟1｠", space + "saw", space + "the",
                     space + "cat"}));
  // No piece aligned to 2 itself: the nearest after it.
  EXPECT_EQ(PutBackPlaceholders(pieces, {0, 1, 3, 3}, {{1, 2}}, true),
            (Strings{space + "I", space + "saw", space + "｟1｠", space + "the",
                     space + "cat"}));
  // Two before one piece keep their order; one past every alignment is
  // left to RestorePlaceholders.
  EXPECT_EQ(
      PutBackPlaceholders(pieces, {0, 1, 2, 3}, {{1, 0}, {2, 0}, {3, 4}}, true),
      (Strings{space + "｟1｠", space + "｟2｠", space + "I", space + "saw",
               space + "the", space + "cat"}));
  // Never inside a word: back to its start. Chinese has no words to keep.
  EXPECT_EQ(PutBackPlaceholders({space + "Kat", "ze", "n"}, {0, 1, 1}, {{1, 1}},
                                true),
            (Strings{space + "｟1｠", space + "Kat", "ze", "n"}));
  EXPECT_EQ(PutBackPlaceholders({space + "我", "看", "猫"}, {0, 1, 2}, {{1, 2}},
                                true),
            (Strings{space + "我", "看", "｟1｠", "猫"}));
  // Tokens of a word tokenizer: the placeholder is a token of its own.
  EXPECT_EQ(PutBackPlaceholders({"I", "saw", "it"}, {0, 1, 2}, {{1, 2}}, false),
            (Strings{"I", "saw", "｟1｠", "it"}));
  EXPECT_THROW(PutBackPlaceholders(pieces, {0}, {}, true),
               std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
