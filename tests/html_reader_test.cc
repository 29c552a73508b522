// ReadHtml and MarkedDocument: which texts an HTML document is cut into, and
// how translations are written back, with everything else byte for byte.
// The "translations" here are rewrites of the texts (upper case, reordered
// markers), so that where each came back is visible.
#include "common/formats/html_reader.h"

#include <functional>
#include <string>
#include <vector>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"
#include "gtest/gtest.h"
#include "tests/marked_text.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using testing_util::Repeat;
using testing_util::ShowMarkers;
using testing_util::ShownTexts;

// Each text rewritten by `rewrite` (over its code points).
std::string Translate(const std::string& html,
                      const testing_util::Rewrite& rewrite) {
  return testing_util::RenderRewritten(ReadHtml(html), rewrite);
}

std::u32string Upper(std::u32string text) {
  return testing_util::UpperCase(std::move(text));
}

std::u32string Same(std::u32string text) { return text; }

TEST(HtmlReaderTest, CutsRunsAcrossInlineElements) {
  const MarkedDocument document = ReadHtml(
      "<p>This is <b>very <i>important</i></b> news.</p>"
      "<p>Second paragraph</p>");
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"This is [0] news.", "very [0]",
                                      "important", "Second paragraph"}));
}

TEST(HtmlReaderTest, RewritesTextsAndKeepsTagsAroundTheirWords) {
  EXPECT_EQ(
      Translate("<p>This is <b>very</b> <a href=\"/x\">good</a>.</p>", Upper),
      "<p>THIS IS <b>VERY</b> <a href=\"/x\">GOOD</a>.</p>");
}

TEST(HtmlReaderTest, TagsFollowTheirMarkerWhereverTheTranslationPutsIt) {
  // Reverses the text: the markers move, and their tags with them.
  const std::string out =
      Translate("<p>one <b>two</b> three</p>", [](std::u32string text) {
        return std::u32string(text.rbegin(), text.rend());
      });
  EXPECT_EQ(out, "<p>eerht <b>owt</b> eno</p>");
}

TEST(HtmlReaderTest, AMarkerTheTranslationDropsIsWrittenAtItsEnd) {
  const std::string out =
      Translate("<p>one <b>two</b> three</p>", [](std::u32string text) {
        std::u32string without;
        for (char32_t c : text) {
          if (InlineMarkerIndex(c) < 0) without.push_back(c);
        }
        return without;
      });
  EXPECT_EQ(out, "<p>one  three<b>two</b></p>");
}

TEST(HtmlReaderTest, AMarkerTheTranslationRepeatsIsWrittenOnce) {
  const std::string out =
      Translate("<p>one <b>two</b> three</p>",
                [](std::u32string text) { return text + text; });
  EXPECT_EQ(out, "<p>one <b>twotwo</b> threeone  three</p>");
}

TEST(HtmlReaderTest, KeepsEverythingButTheTextsByteForByte) {
  const std::string html =
      "<!DOCTYPE html>\n<html lang=en><head>\n"
      "<meta charset=\"utf-8\"><title>A title</title>\n"
      "<style>p { color: red }</style>\n"
      "<script>var s = \"Do not translate\";</script></head>\n"
      "<body>\n  <!-- a comment -->\n"
      "  <div class='box' data-x=\"Some words\">\n"
      "    <p>Hello <em>world</em>!</p>\n"
      "  </div>\n"
      "</body></html>\n";
  EXPECT_EQ(Translate(html, Same), html);
  EXPECT_EQ(Translate(html, Upper),
            "<!DOCTYPE html>\n<html lang=en><head>\n"
            "<meta charset=\"utf-8\"><title>A TITLE</title>\n"
            "<style>p { color: red }</style>\n"
            "<script>var s = \"Do not translate\";</script></head>\n"
            "<body>\n  <!-- a comment -->\n"
            "  <div class='box' data-x=\"Some words\">\n"
            "    <p>HELLO <em>WORLD</em>!</p>\n"
            "  </div>\n"
            "</body></html>\n");
}

TEST(HtmlReaderTest, LeavesCodeScriptsAndNoTranslateAlone) {
  const std::string html =
      "<p>Run <code>make all</code> now</p>"
      "<pre>keep this\n  as is</pre>"
      "<p translate=\"no\">Brand name</p>"
      "<p class=\"big notranslate\">Other brand</p>"
      "<p class=\"notranslated\">translated here</p>"
      "<script>let words = 'no';</script>"
      "<style>.a::after { content: 'no' }</style>";
  EXPECT_EQ(Translate(html, Upper),
            "<p>RUN <code>make all</code> NOW</p>"
            "<pre>keep this\n  as is</pre>"
            "<p translate=\"no\">Brand name</p>"
            "<p class=\"big notranslate\">Other brand</p>"
            "<p class=\"notranslated\">TRANSLATED HERE</p>"
            "<script>let words = 'no';</script>"
            "<style>.a::after { content: 'no' }</style>");
}

TEST(HtmlReaderTest, TranslatesTheTextAttributesOnly) {
  const std::string out = Translate(
      "<p><img src=\"cat.png\" alt=\"A cat\" class=\"photo\"> "
      "<input placeholder='Your name' name=\"name\"> "
      "<a href=\"/help\" title=The&amp;help aria-label=\"Help page\">"
      "help</a></p>",
      Upper);
  EXPECT_EQ(out,
            "<p><img src=\"cat.png\" alt=\"A CAT\" class=\"photo\"> "
            "<input placeholder='YOUR NAME' name=\"name\"> "
            "<a href=\"/help\" title=\"THE&amp;HELP\" aria-label=\"HELP "
            "PAGE\">HELP</a></p>");
}

TEST(HtmlReaderTest, EscapesTranslationsAndKeepsEntitiesOutsideThem) {
  EXPECT_EQ(ReadHtml("<p>Fish &amp; chips &lt;3</p>").texts(),
            std::vector<std::string>{"Fish & chips <3"});
  EXPECT_EQ(Translate("<p>Fish &amp; chips &lt;3</p>&copy;", Same),
            "<p>Fish &amp; chips &lt;3</p>&copy;");
  EXPECT_EQ(Translate("<p title=\"a &quot;b&quot; c\">x y</p>",
                      [](std::u32string text) { return text + U" & \"q\""; }),
            "<p title=\"a &quot;b&quot; c &amp; &quot;q&quot;\">x y &amp; "
            "\"q\"</p>");
}

TEST(HtmlReaderTest, LineBreaksEndRunsAndWhitespaceAroundRunsIsKept) {
  const MarkedDocument document =
      ReadHtml("<p>\n  First   line<br>second\n  line\n</p>");
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"First line", "second line"}));
  EXPECT_EQ(Translate("<p>\n  First   line<br>second\n  line\n</p>", Upper),
            "<p>\n  FIRST LINE<br>SECOND LINE\n</p>");
}

TEST(HtmlReaderTest, KeepsMastodonMentionsHashtagsAndLinks) {
  const std::string post =
      "<p>Hello <span class=\"h-card\" translate=\"no\"><a "
      "href=\"https://example.social/@alice\" class=\"u-url mention\">"
      "@<span>alice</span></a></span>, see <a "
      "href=\"https://example.org/page\" rel=\"nofollow noopener\" "
      "target=\"_blank\"><span class=\"invisible\">https://</span>"
      "<span class=\"\">example.org/page</span></a><br>"
      "Nice day <a href=\"https://example.social/tags/spring\" "
      "class=\"mention hashtag\" rel=\"tag\">#<span>spring</span></a></p>";
  const MarkedDocument document = ReadHtml(post);
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"Hello [0], see [1]", "Nice day [0]"}));
  EXPECT_EQ(Translate(post, Upper),
            "<p>HELLO <span class=\"h-card\" translate=\"no\"><a "
            "href=\"https://example.social/@alice\" class=\"u-url mention\">"
            "@<span>alice</span></a></span>, SEE <a "
            "href=\"https://example.org/page\" rel=\"nofollow noopener\" "
            "target=\"_blank\"><span class=\"invisible\">https://</span>"
            "<span class=\"\">example.org/page</span></a><br>"
            "NICE DAY <a href=\"https://example.social/tags/spring\" "
            "class=\"mention hashtag\" rel=\"tag\">#<span>spring</span></a>"
            "</p>");
  EXPECT_EQ(testing_util::HtmlStructure(Translate(post, Upper)),
            testing_util::HtmlStructure(post));
}

TEST(HtmlReaderTest, RunsWithoutLettersAreNotTexts) {
  EXPECT_TRUE(ReadHtml("<p>2024</p><p> </p><p>-- 3.5% --</p>").texts().empty());
  // An element alone in its block is no run, but its words are a text.
  EXPECT_EQ(ShownTexts(ReadHtml("<p><b>Bold words</b></p>")),
            std::vector<std::string>{"Bold words"});
}

TEST(HtmlReaderTest, MisnestedTagsEndARunInsteadOfReorderingTheSource) {
  // The parser closes <i> inside <b> and reopens it: the tree no longer
  // follows the source, and nothing of the source is lost or moved.
  const std::string html = "<p>a <b>b <i>c</b> d</i> e</p>";
  EXPECT_EQ(Translate(html, Same), html);
  EXPECT_EQ(Translate(html, Upper).size(), html.size());
}

TEST(HtmlReaderTest, AnElementClosedByAnotherEndTagIsNoMarker) {
  // </p> closes the <a> too: the <a> has no end tag of its own, so it
  // cannot travel as a marker (it would carry the </p> with it).
  const std::string html =
      "<p>Hello <b>bold</b>, see <a href=\"/x\">Next line</p>";
  const std::string out = Translate(html, [](std::u32string text) {
    return std::u32string(text.rbegin(), text.rend());
  });
  EXPECT_EQ(testing_util::HtmlStructure(out), testing_util::HtmlStructure(html))
      << out;
}

TEST(HtmlReaderTest, ACommentCutShortByTheEndIsNoMarker) {
  // The comment runs to the end of the document: moved before <b>, it
  // would swallow the element.
  const std::string html = "<p>one <b>two</b> three <!-- four";
  const std::string out = Translate(html, [](std::u32string text) {
    return std::u32string(text.rbegin(), text.rend());
  });
  EXPECT_EQ(testing_util::HtmlStructure(out), testing_util::HtmlStructure(html))
      << out;
}

TEST(HtmlReaderTest, TextAroundIgnoredTagsIsLeftAlone) {
  // The parser ignores a stray <html> and </tr> inside the body and joins
  // the text around them into one node, which is then not one stretch of
  // the source: it is kept as it is.
  const std::string html =
      "<p>see <b>this</b> one<html lang=x> two</tr> three</p>";
  EXPECT_EQ(Translate(html, Upper),
            "<p>SEE <b>THIS</b> one<html lang=x> two</tr> three</p>");
}

TEST(HtmlReaderTest, ManyInlineElementsSplitARun) {
  std::string html = "<p>";
  for (int i = 0; i < kMaxInlineMarkers + 3; ++i) {
    html += "word <b>bold</b> ";
  }
  html += "</p>";
  const MarkedDocument document = ReadHtml(html);
  for (const std::string& text : document.texts()) {
    int markers = 0;
    for (char32_t c : DecodeUtf8(text)) markers += InlineMarkerIndex(c) >= 0;
    EXPECT_LE(markers, kMaxInlineMarkers);
  }
  std::string upper = html;
  for (char& c : upper) {
    if (c >= 'a' && c <= 'z') c -= 'a' - 'A';
  }
  // Tags stay lower case; only the words changed.
  EXPECT_EQ(Translate(html, Upper), [&] {
    std::string expected = "<p>";
    for (int i = 0; i < kMaxInlineMarkers + 3; ++i) {
      expected += "WORD <b>BOLD</b> ";
    }
    return expected + "</p>";
  }());
}

TEST(HtmlReaderTest, RenderChecksTheCount) {
  const MarkedDocument document = ReadHtml("<p>Hello</p>");
  EXPECT_THROW(document.Render({}), std::invalid_argument);
}

TEST(HtmlReaderTest, PlainTextIsOneText) {
  EXPECT_EQ(Translate("Just text, no tags.", Upper), "JUST TEXT, NO TAGS.");
  EXPECT_EQ(Translate("a < b and c > d", Same), "a &lt; b and c &gt; d");
}

// A character reference past U+10FFFF reads as U+FFFD, as HTML says, also
// where Gumbo's sum of its digits wraps (from 2^31 on it wrote the low
// byte: 0xAA, refused as invalid UTF-8, or `<`, NUL, `A`).
TEST(HtmlReaderTest, CharacterReferencesOutOfRangeReadAsReplacement) {
  for (const std::string ref :
       {"&#x110000;", "&#xaaaaaaaa;", "&#xaaaaaaaa", "&#x8000003C;",
        "&#x80000000;", "&#x100000041;", "&#X0000000100000041;",
        "&#99999999999;", "&#2147483708;", "&#xD800;"}) {
    const MarkedDocument document = ReadHtml("<p>a" + ref + "z</p>");
    ASSERT_EQ(document.texts().size(), 1u) << ref;
    EXPECT_EQ(document.texts()[0], "a\uFFFDz") << ref;
  }
  // In an attribute too, and what is around it stays where it was.
  const MarkedDocument document =
      ReadHtml("<p title=\"x&#x8000003C;y\">a &#x10FFFD; b</p>");
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"x\uFFFDy", "a \U0010FFFD b"}));
}

// The message ReadHtml throws for `html`, or "" when it reads it.
std::string Refusal(const std::string& html, int max_depth) {
  try {
    ReadHtml(html, max_depth);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Elements nested past the limit are refused, naming the depth, at 100,000
// levels too (the reader and Gumbo's own teardown once recursed per level
// and overflowed the stack, and Gumbo's parse of them is quadratic: they
// are refused before it); at the limit they are read.
TEST(HtmlReaderTest, NestingDeeperThanTheLimitIsRefused) {
  // <html> and <body> hold the divs.
  EXPECT_EQ(Refusal(Repeat("<div>", 18) + "deep words", 20), "");
  EXPECT_EQ(Refusal(Repeat("<div>", 19) + "deep words", 20),
            "HTML nests elements 21 deep; the limit is 20");
  const std::string deepest = Repeat("<div>", 100000) + "deep words";
  EXPECT_EQ(Refusal(deepest, kDefaultMaxDocumentDepth),
            "HTML nests elements more than 256 deep; the limit is 256");
  const MarkedDocument read =
      ReadHtml(Repeat("<div>", 200) + "deep words", kDefaultMaxDocumentDepth);
  EXPECT_EQ(read.texts(), std::vector<std::string>{"deep words"});
}

// The pass before the parse counts only what nests: elements the parser
// closes by themselves (paragraphs, list items, cells, links), void
// elements, comments, raw text and quoted attributes do not add depth, so
// long documents of them are read; end tags close what they name.
TEST(HtmlReaderTest, OnlyWhatNestsCountsTowardsTheDepth) {
  const std::string flat =
      Repeat("<p>para <a href='x>y'>link</a><li>item<td>cell<br><img src=x>",
             400) +
      "<!-- <div><div><div> -->" +
      "<script>for (i = 0; i<n; i++) { s += '<div>'; }</script>" +
      Repeat("<div>x</div>", 400) + Repeat("<span>x</span>", 400) + "<svg>" +
      Repeat("<path d='M0'/>", 400) + "</svg>";
  EXPECT_EQ(Refusal(flat, 20), "");
  // <div/> is a start tag in HTML: it nests.
  EXPECT_EQ(Refusal(Repeat("<div/>", 30), 20),
            "HTML nests elements more than 20 deep; the limit is 20");
  EXPECT_EQ(Refusal(Repeat("<ul><li>", 30), 20),
            "HTML nests elements more than 20 deep; the limit is 20");
}

// Formatting elements reopened in every block multiply elements (200
// reopened in each of 20,000 paragraphs: 4 million of them, from 170 KB):
// the parse is stopped at its memory bound and the document refused (in a
// slow build, such as clang's ASan at -O0, its CPU bound may come first).
TEST(HtmlReaderTest, MarkupThatMultipliesElementsIsRefused) {
  std::string html = "<p>";
  for (int i = 0; i < 200; ++i) {
    html += "<b class=c" + std::to_string(i) + ">";
  }
  html += "</p>" + Repeat("<p>x</p>", 20000);
  EXPECT_EQ(
      Refusal(html, kDefaultMaxDocumentDepth).rfind("HTML: parsing it", 0), 0u);
}

// Markup that nests in ways the pass before the parse does not follow is
// refused all the same: by the parse's CPU time budget or, where the host
// parses it faster, by the depth check after it. Tricks the pass does
// follow (a comment "<!-->", a quote never closed, a div in SVG) are
// refused before the parse, and so is a tag of 20,000 attributes (Gumbo
// looks for each among those before it: seconds), on every host, while a
// tag of a hundred reads as any other.
TEST(HtmlReaderTest, MarkupThatSlowsTheParserIsRefused) {
  const std::string deep_divs = Repeat("<div>", 40000);
  for (const std::string& html :
       {Repeat("<h1><li>", 40000), Repeat("<option><h1>", 40000),
        "<!-->" + deep_divs, "<!-- --!>" + deep_divs, "<div ='>" + deep_divs,
        "<svg>" + Repeat("<div/>", 40000),
        "<svg><foreignObject>" + Repeat("<div/>", 40000)}) {
    const std::string why = Refusal(html, kDefaultMaxDocumentDepth);
    EXPECT_EQ(why.rfind("HTML", 0), 0u) << why << " for " << html.substr(0, 40);
  }
  std::string attributes = "<p";
  for (int i = 0; i < 20000; ++i) {
    attributes += (i % 2 ? " a" : "/a") + std::to_string(i) + "='x y'";
  }
  EXPECT_EQ(Refusal(attributes + ">words", kDefaultMaxDocumentDepth),
            "HTML: a tag has more than 512 attributes; the limit is 512");
  std::string hundred = "<p";
  for (int i = 0; i < 100; ++i) hundred += " data-a" + std::to_string(i) + "=x";
  const MarkedDocument read =
      ReadHtml(hundred + ">Good morning.</p>", kDefaultMaxDocumentDepth);
  ASSERT_EQ(read.texts().size(), 1u);
}

// Unclosed tags once had Gumbo record every parse error with a copy of the
// open elements: such documents read as any other now, 50 KB of them here
// (30 KB once took the server to 1 GB). Not more: the parse's
// CPU budget (0.5 s + 1 s/MiB) holds on any build, an AddressSanitizer
// build at -O0 included (300 KB took 1.05 s there, over its 0.79 s).
TEST(HtmlReaderTest, UnclosedTagsAreRead) {
  const MarkedDocument document =
      ReadHtml(Repeat("<a href=x>", 5000) + "words", kDefaultMaxDocumentDepth);
  EXPECT_EQ(document.source().size(), 5000u * 10 + 5);
}

}  // namespace
}  // namespace fanyi
