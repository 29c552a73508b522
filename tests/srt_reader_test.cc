// ReadSrt: a cue's lines are one text; numbers, timings, blank lines, line
// endings and the tags a cue begins or ends with stay byte for byte.
#include "common/formats/srt_reader.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/marked_text.h"

namespace fanyi {
namespace {

using testing_util::RenderRewritten;
using testing_util::ShownTexts;
using testing_util::UpperCase;

TEST(SrtReaderTest, EachCueIsOneTextAndTheRestIsKept) {
  const std::string srt =
      "1\r\n00:00:01,000 --> 00:00:04,000\r\nHello there.\r\n\r\n"
      "2\r\n00:00:05,500 --> 00:00:07,250\r\nHow are\r\nyou today?\r\n\r\n"
      "3\r\n00:00:08,000 --> 00:00:09,000\r\n...\r\n";
  const MarkedDocument document = ReadSrt(srt);
  // A cue of punctuation alone has nothing to translate.
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"Hello there.", "How are you today?"}));
  EXPECT_EQ(RenderRewritten(document, UpperCase),
            "1\r\n00:00:01,000 --> 00:00:04,000\r\nHELLO THERE.\r\n\r\n"
            "2\r\n00:00:05,500 --> 00:00:07,250\r\nHOW ARE YOU TODAY?\r\n\r\n"
            "3\r\n00:00:08,000 --> 00:00:09,000\r\n...\r\n");
}

TEST(SrtReaderTest, TagsAroundACueStayAndTagsInsideAreMarkers) {
  const std::string srt =
      "7\n00:01:00,000 --> 00:01:02,000\n{\\an8}<i>I said <b>no</b>.</i>\n";
  const MarkedDocument document = ReadSrt(srt);
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"I said [0]no[1]."}));
  // Markers go where the translation puts them.
  EXPECT_EQ(RenderRewritten(document,
                            [](std::u32string text) {
                              return UpperCase(text.substr(7, 4)) + U" SAID I" +
                                     text.substr(11);
                            }),
            "7\n00:01:00,000 --> 00:01:02,000\n{\\an8}<i><b>NO</b> SAID I."
            "</i>\n");
}

TEST(SrtReaderTest, NumberingGapsAndMissingNumbersAreKept) {
  // Some files number from 0, skip numbers, or have none.
  const std::string srt =
      "00:00:01,000 --> 00:00:02,000\nFirst line.\n\n\n"
      "12\n00:00:03,000 --> 00:00:04,000\nSecond line.";
  const MarkedDocument document = ReadSrt(srt);
  EXPECT_EQ(ShownTexts(document),
            (std::vector<std::string>{"First line.", "Second line."}));
  EXPECT_EQ(RenderRewritten(document, UpperCase),
            "00:00:01,000 --> 00:00:02,000\nFIRST LINE.\n\n\n"
            "12\n00:00:03,000 --> 00:00:04,000\nSECOND LINE.");
}

TEST(SrtReaderTest, AFileWithoutTimingsIsRefused) {
  EXPECT_THROW(ReadSrt("Just some text.\nAnother line.\n"),
               std::invalid_argument);
  EXPECT_THROW(ReadSrt("1\n00:00:01,000 --> 00:00:02,000\n\xff\n"),
               std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
