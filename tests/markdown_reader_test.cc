// ReadMarkdown: which texts a Markdown document is cut into, and how the
// translations are written back: code, link targets and block markers
// untouched.
#include "common/formats/markdown_reader.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/marked_text.h"

namespace fanyi {
namespace {

using testing_util::RenderRewritten;
using testing_util::ShownTexts;
using testing_util::UpperCase;

TEST(MarkdownReaderTest, BlocksAreTextsAndCodeIsKept) {
  const std::string markdown =
      "---\ntitle: notes\n---\n"
      "# A title #\n\n"
      "First line of a paragraph\ncontinues here.  \n\n"
      "```sh\necho \"do not translate\"\n```\n\n"
      "    indented code stays\n\n"
      "- an item\n- [x] a done task\n1. an ordered one\n\n"
      "> a quote\n\n"
      "[ref]: https://example.org/page\n\n"
      "---\n";
  const MarkedDocument document = ReadMarkdown(markdown);
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{
                "A title", "First line of a paragraph continues here.",
                "an item", "a done task", "an ordered one", "a quote"}));
  EXPECT_EQ(RenderRewritten(document, UpperCase),
            "---\ntitle: notes\n---\n"
            "# A TITLE #\n\n"
            "FIRST LINE OF A PARAGRAPH CONTINUES HERE.  \n\n"
            "```sh\necho \"do not translate\"\n```\n\n"
            "    indented code stays\n\n"
            "- AN ITEM\n- [x] A DONE TASK\n1. AN ORDERED ONE\n\n"
            "> A QUOTE\n\n"
            "[ref]: https://example.org/page\n\n"
            "---\n");
}

TEST(MarkdownReaderTest, InlineCodeAndLinkTargetsAreUntouched) {
  const std::string markdown =
      "Run `make test` and read [the guide](https://example.org/a_b) or "
      "**this part** at <https://example.org>.\n";
  const MarkedDocument document = ReadMarkdown(markdown);
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"Run [0] and read [1] or [2] at [3].",
                                      "the guide", "this part"}));
  EXPECT_EQ(RenderRewritten(document, UpperCase),
            "RUN `make test` AND READ [THE GUIDE](https://example.org/a_b) OR "
            "**THIS PART** AT <https://example.org>.\n");
}

TEST(MarkdownReaderTest, HtmlBlocksAreKeptAndInlineHtmlIsAMarker) {
  const std::string markdown =
      "<div align=\"center\">\n  <img src=\"logo.png\">\n</div>\n\n"
      "<!-- a note -->\n\n"
      "<b>Note</b> this line.\n";
  const MarkedDocument document = ReadMarkdown(markdown);
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"[0]Note[1] this line."}));
  EXPECT_EQ(RenderRewritten(document, UpperCase),
            "<div align=\"center\">\n  <img src=\"logo.png\">\n</div>\n\n"
            "<!-- a note -->\n\n"
            "<b>NOTE</b> THIS LINE.\n");
}

TEST(MarkdownReaderTest, TableCellsAreTextsAndTheRuleIsKept) {
  const std::string markdown =
      "| Name | Meaning |\n|:-----|--------:|\n| `x` | the first one |\n";
  const MarkedDocument document = ReadMarkdown(markdown);
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"Name", "Meaning", "the first one"}));
  EXPECT_EQ(
      RenderRewritten(document, UpperCase),
      "| NAME | MEANING |\n|:-----|--------:|\n| `x` | THE FIRST ONE |\n");
}

TEST(MarkdownReaderTest, SnakeCaseAndUnclosedDelimitersAreWords) {
  const MarkedDocument document =
      ReadMarkdown("Set max_batch_delay to 5 * 2 and `unclosed.\n");
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{
                "Set max_batch_delay to 5 * 2 and `unclosed."}));
}

TEST(MarkdownReaderTest, ALinkAloneIsTranslatedInside) {
  const MarkedDocument document = ReadMarkdown("[Read the guide](guide.md)\n");
  EXPECT_EQ(ShownTexts(document), (std::vector<std::string>{"Read the guide"}));
  EXPECT_EQ(RenderRewritten(document, UpperCase),
            "[READ THE GUIDE](guide.md)\n");
}

TEST(MarkdownReaderTest, ManyUnclosedOpenersStayWords) {
  // Openers that never close are words, however many: the whole line is
  // one text. (The reader looks for each kind's closer to the end once;
  // the fuzzer's seeds hold this shape, run under a timeout.)
  std::string line;
  for (int i = 0; i < 2000; ++i) line += "*a [c <d _e ";
  const MarkedDocument document = ReadMarkdown(line + "\n");
  ASSERT_EQ(document.texts().size(), 1u);
  EXPECT_EQ(document.texts()[0], line.substr(0, line.size() - 1));
}

}  // namespace
}  // namespace fanyi
