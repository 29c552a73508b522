#include "common/pipeline/request_limits.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace fanyi {
namespace {

TextLimits SmallLimits() {
  TextLimits limits;
  limits.max_input_chars = 10;
  limits.max_request_parts = 4;
  limits.max_glossary_terms = 2;
  limits.max_texts = 3;
  limits.default_beam_size = 4;
  limits.max_beam_size = 6;
  return limits;
}

// The message of the std::invalid_argument `check` throws; "" if none.
template <typename Check>
std::string Refusal(Check check) {
  try {
    check();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(RequestLimitsTest, CountsTexts) {
  const RequestLimits limits(SmallLimits());
  EXPECT_EQ(Refusal([&] { limits.CheckTextCount(0, "q"); }),
            "q is empty; send at least one text");
  EXPECT_EQ(Refusal([&] { limits.CheckTextCount(4, "texts"); }),
            "texts has 4 entries; the limit is 3");
  EXPECT_EQ(Refusal([&] { limits.CheckTextCount(3, "texts"); }), "");
}

TEST(RequestLimitsTest, CountsCharactersNotBytes) {
  const RequestLimits limits(SmallLimits());
  EXPECT_EQ(Refusal([&] { limits.CheckText("", "text"); }), "text is empty");
  // Ten Chinese characters are thirty bytes, and within the limit.
  EXPECT_EQ(Refusal([&] { limits.CheckText("我爱你我爱你我爱你我", "text"); }),
            "");
  EXPECT_EQ(Refusal([&] { limits.CheckText("abcdefghijk", "texts[1]"); }),
            "texts[1] has 11 characters; the limit is 10");
  EXPECT_EQ(Refusal([&] { limits.CheckText(std::string(41, 'a'), "q"); }),
            "q has 41 bytes, more than 10 characters; the limit is 10 "
            "characters");
}

TEST(RequestLimitsTest, ResolvesTheBeamSize) {
  const RequestLimits limits(SmallLimits());
  TextRequest request;
  EXPECT_EQ(limits.ReadOptions(request).beam_size, 4);
  request.beam_size = 1;
  EXPECT_EQ(limits.ReadOptions(request).beam_size, 1);
  request.beam_size = 99;
  EXPECT_EQ(limits.ReadOptions(request).beam_size, 6);
  request.beam_size = -1;
  EXPECT_EQ(Refusal([&] { limits.ReadOptions(request); }),
            "beam_size is -1; use 0 for the server default, 1 for greedy or "
            "more for beam search");
}

TEST(RequestLimitsTest, ChecksAndMergesGlossaryTerms) {
  const RequestLimits limits(SmallLimits());
  TextRequest request;
  request.glossary = {{"fanyi", "翻译"}};
  request.do_not_translate = {"BA2490"};
  const TextOptions options = limits.ReadOptions(request);
  ASSERT_EQ(options.glossary.size(), 2u);
  EXPECT_EQ(options.glossary[1].source, "BA2490");
  EXPECT_EQ(options.glossary[1].target, "");

  request.do_not_translate = {" "};
  EXPECT_EQ(Refusal([&] { limits.ReadOptions(request); }),
            "do_not_translate[0] is empty");
  request.do_not_translate = {std::string(257, 'a')};
  EXPECT_EQ(Refusal([&] { limits.ReadOptions(request); }),
            "do_not_translate[0] has 257 bytes; the limit is 256");
  request.do_not_translate = {"a", "b"};
  EXPECT_EQ(Refusal([&] { limits.ReadOptions(request); }),
            "glossary and do_not_translate have 3 terms; the limit is 2");
  request.do_not_translate = {};
  request.glossary = {{"\xff", "x"}};
  // Starts with the field's name, then the decoder's reason.
  const std::string refusal = Refusal([&] { limits.ReadOptions(request); });
  EXPECT_EQ(refusal.rfind("glossary[0].source: ", 0), 0u) << refusal;
}

TEST(RequestLimitsTest, CountsTheRequestsParts) {
  const RequestLimits limits(SmallLimits());
  EXPECT_EQ(Refusal([&] { limits.CheckPartCount(4); }), "");
  EXPECT_EQ(Refusal([&] { limits.CheckPartCount(5); }),
            "the request has 5 sentences and clauses to translate; the limit "
            "is 4; send the text in several requests");
}

}  // namespace
}  // namespace fanyi
