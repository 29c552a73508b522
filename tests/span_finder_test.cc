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
    const std::string kind =
        span.kind == SpanKind::kTemplate
            ? std::string(TemplateTokenKindName(span.token))
            : kKinds[static_cast<int>(span.kind)];
    shown.push_back(kind + ":" + SpanText(decoded, span));
  }
  return shown;
}

using Strings = std::vector<std::string>;

// The template tokens alone, each as "kind:text".
Strings Tokens(const std::string& text) {
  const std::u32string decoded = DecodeUtf8(text);
  Strings shown;
  for (const Span& span : SpanFinder().Find(decoded)) {
    if (span.kind != SpanKind::kTemplate) continue;
    shown.push_back(std::string(TemplateTokenKindName(span.token)) + ":" +
                    SpanText(decoded, span));
  }
  return shown;
}

// Every kind of template token is found whole, where it is.
TEST(SpanFinderTest, FindsTemplateTokensOfEveryKind) {
  EXPECT_EQ(Tokens("%s, %d, %1$s, %(name)s, %-5.2f, %lu, %05d, %@, %%, %1 "
                   "and %2"),
            (Strings{"printf:%s", "printf:%d", "printf:%1$s", "printf:%(name)s",
                     "printf:%-5.2f", "printf:%lu", "printf:%05d", "printf:%@",
                     "printf:%%", "printf:%1", "printf:%2"}));
  EXPECT_EQ(
      Tokens("{0} files in {name}: {{count}} {}, "
             "{count, plural, one {# item} other {# items}}."),
      (Strings{"braces:{0}", "braces:{name}", "braces:{{count}}", "braces:{}",
               "braces:{count, plural, one {# item} other {# items}}"}));
  EXPECT_EQ(Tokens("Hello ${name} and $user_2!"),
            (Strings{"dollar:${name}", "dollar:$user_2"}));
  EXPECT_EQ(Tokens("Hello :name, you have :count messages (:unit)."),
            (Strings{"colon::name", "colon::count", "colon::unit"}));
  EXPECT_EQ(Tokens("&File, Save &As, Fi&le"),
            (Strings{"accelerator:&", "accelerator:&", "accelerator:&"}));
  EXPECT_EQ(Tokens("Tom &amp; Jerry &#169; &#x1F600;"),
            (Strings{"entity:&amp;", "entity:&#169;", "entity:&#x1F600;"}));
  EXPECT_EQ(Tokens("Click <0>here</0> or <12/>."),
            (Strings{"tag:<0>", "tag:</0>", "tag:<12/>"}));
  EXPECT_EQ(Tokens("Click <b>Save</b>,<br/> <a href=\"https://x.org/?a=1&b=2\" "
                   "target='_blank'>here</a> <SPAN class=\"k\" >x</SPAN>"),
            (Strings{"tag:<b>", "tag:</b>", "tag:<br/>",
                     "tag:<a href=\"https://x.org/?a=1&b=2\" target='_blank'>",
                     "tag:</a>", "tag:<SPAN class=\"k\" >", "tag:</SPAN>"}));
  EXPECT_EQ(Tokens("Line one\\nLine two\\t\\\""),
            (Strings{"escape:\\n", "escape:\\t", "escape:\\\""}));
  EXPECT_EQ(
      Tokens("Great 👍🏽 job 👨‍👩‍👧 ❤️!"),
      (Strings{"emoji:👍🏽", "emoji:👨‍👩‍👧", "emoji:❤️"}));
}

// What only looks like a token is text: prices, percentages, a colon after
// a word, a lone ampersand, unbalanced braces, comparisons and angle
// brackets around anything but an inline element's tag.
TEST(SpanFinderTest, WhatOnlyLooksLikeATemplateTokenIsText) {
  for (const std::string text : {"50% off",
                                 "100 % sure",
                                 "% d",
                                 "Note: this",
                                 "a:b",
                                 "::x",
                                 "AT & T",
                                 "&& both",
                                 "{ unclosed",
                                 "a}b",
                                 "$5 and $ 6",
                                 "<x>y</x>",
                                 "<1234>",
                                 "</>",
                                 "\\q",
                                 "%(name",
                                 "%()s",
                                 "x{\ny}",
                                 "${",
                                 "&#;",
                                 "&;",
                                 "if a <b and c> d",
                                 "<a href=x>",
                                 "<b",
                                 "</b x>",
                                 "<a href=\"x>\">",
                                 "<h1>Title</h1>"}) {
    EXPECT_EQ(Tokens(text), Strings{}) << text;
  }
  EXPECT_EQ(Shown(SpanFinder(), "50% off"),
            (Strings{"number:50%", "word:off"}));
}

// Braces nested past 8 levels, or longer than 256 characters, open no
// token; and a finder told not to look finds none.
TEST(SpanFinderTest, TemplateTokensAreBoundedAndCanBeTurnedOff) {
  EXPECT_EQ(Tokens("{{{{{{{{x}}}}}}}}"), (Strings{"braces:{{{{{{{{x}}}}}}}}"}));
  // Nine deep: the outer brace opens no token, the eight inside it do.
  EXPECT_EQ(Tokens("{{{{{{{{{x}}}}}}}}}"),
            (Strings{"braces:{{{{{{{{x}}}}}}}}"}));
  EXPECT_EQ(Tokens("{" + std::string(254, 'a') + "}").size(), 1u);
  EXPECT_EQ(Tokens("{" + std::string(255, 'a') + "}"), Strings{});
  EXPECT_EQ(Shown(SpanFinder({}, /*template_tokens=*/false), "%s {name}"),
            (Strings{"word:s", "word:name"}));
}

// A scan that tries a token at every position looks a bounded way ahead:
// 100,000 unclosed braces, percent signs and dollars find nothing, and
// 100,000 tokens are 100,000 spans.
TEST(SpanFinderTest, TemplateTokensScanLinearly) {
  EXPECT_EQ(Tokens(std::string(100000, '{')), Strings{});
  EXPECT_EQ(Tokens(std::string(100000, '$')), Strings{});
  EXPECT_EQ(Tokens(std::string(100000, '%')).size(), 50000u);  // %% each.
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "{a}";
  EXPECT_EQ(Tokens(many).size(), 100000u);
}

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
