// SpanFinder: the spans it finds, on ordinary text and on the shapes that
// would make a rescanning finder slow (long runs of address characters,
// many glossary terms sharing long prefixes).
#include "common/text/span_finder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

// Each span as "kind:text".
std::vector<std::string> Shown(const SpanFinder& finder,
                               const std::string& text) {
  const std::u32string decoded = DecodeUtf8(text);
  std::vector<std::string> shown;
  for (const Span& span : finder.Find(decoded)) {
    static const char* const kKinds[] = {
        "markup", "glossary", "url", "email", "number", "word", "literal"};
    shown.push_back(std::string(kKinds[static_cast<int>(span.kind)]) + ":" +
                    SpanText(decoded, span));
  }
  return shown;
}

using Strings = std::vector<std::string>;

TEST(SpanFinderTest, FindsAddressesInsideLongRunsOfAddressCharacters) {
  const SpanFinder finder;
  EXPECT_EQ(Shown(finder, "Mail tom.lee@example.org today."),
            (Strings{"word:Mail", "email:tom.lee@example.org", "word:today"}));
  // Every word start inside "a.a.a...." shares one run: the address starts
  // at the first.
  std::string run;
  for (int i = 0; i < 5000; ++i) run += "a.";
  EXPECT_EQ(Shown(finder, run + "b@example.org"),
            (Strings{"email:" + run + "b@example.org"}));
  // With no valid domain, no address, and the words are words.
  const Strings words = Shown(finder, run + "b@nodot");
  ASSERT_FALSE(words.empty());
  EXPECT_EQ(words.front(), "word:a");
  for (const std::string& span : words) {
    EXPECT_NE(span.substr(0, 6), "email:") << span;
  }
}

TEST(SpanFinderTest, APlaceholdersFormInTheTextIsALiteral) {
  EXPECT_EQ(
      Shown(SpanFinder(), "I paid ｟1｠ and ｟ x ｠."),
      (Strings{"word:I", "word:paid", "literal:｟1｠", "word:and", "word:x"}));
}

TEST(SpanFinderTest, TheLongestGlossaryTermWinsAndEqualTermsTakeTheFirst) {
  const SpanFinder finder({"New York", "new york city", "York", "NEW YORK"});
  const std::u32string text = DecodeUtf8("I love New York City and york.");
  const std::vector<Span> spans = finder.Find(text);
  std::vector<int> entries;
  for (const Span& span : spans) {
    if (span.kind == SpanKind::kGlossary)
      entries.push_back(span.glossary_entry);
  }
  EXPECT_EQ(entries, (std::vector<int>{1, 2}));
  // A term must end on a word boundary.
  EXPECT_EQ(Shown(SpanFinder({"new"}), "Newton is new."),
            (Strings{"word:Newton", "word:is", "glossary:new"}));
  // Equal terms: the first listed.
  const std::vector<Span> same =
      SpanFinder({"york", "York"}).Find(DecodeUtf8("york"));
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0].glossary_entry, 0);
}

TEST(SpanFinderTest, ManyTermsSharingLongPrefixesStillMatchExactly) {
  // 256 terms of 255 characters that differ only in their last: the text
  // holds the 200th.
  std::vector<std::string> terms;
  const std::string stem(254, 'a');
  for (int k = 0; k < 256; ++k) {
    std::string term = stem;
    AppendUtf8(static_cast<char32_t>(0x4E00 + k), &term);
    terms.push_back(term);
  }
  const SpanFinder finder(terms);
  std::string text = "x " + terms[200] + " y " + stem + " z";
  const std::vector<Span> spans = finder.Find(DecodeUtf8(text));
  int glossary = 0;
  for (const Span& span : spans) {
    if (span.kind != SpanKind::kGlossary) continue;
    ++glossary;
    EXPECT_EQ(span.glossary_entry, 200);
  }
  EXPECT_EQ(glossary, 1);
}

}  // namespace
}  // namespace fanyi
