#include "common/text/script_converter.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace fanyi {
namespace {

TEST(ScriptConverterTest, MixedTextBecomesSimplified) {
  const ScriptConverter simplified(ChineseScript::kSimplified);
  // 愛 and 車 are Traditional forms; the rest is already Simplified.
  EXPECT_EQ(simplified.Convert("我愛你，火车在哪里？"), "我爱你，火车在哪里？");
  EXPECT_EQ(simplified.Convert("開車 3.50 USD"), "开车 3.50 USD");
}

TEST(ScriptConverterTest, TaiwanAndHongKongStandards) {
  const ScriptConverter taiwan(ChineseScript::kTraditionalTaiwan);
  const ScriptConverter hong_kong(ChineseScript::kTraditionalHongKong);
  EXPECT_EQ(taiwan.Convert("我爱你，火车在哪里？"), "我愛你，火車在哪裡？");
  // s2twp also uses Taiwan's words: 软件 (software) is 軟體 there.
  EXPECT_EQ(taiwan.Convert("软件"), "軟體");
  EXPECT_EQ(hong_kong.Convert("火车在哪里？"), "火車在哪裏？");
  // Mixed input converts as a whole.
  EXPECT_EQ(taiwan.Convert("我愛你，火车"), "我愛你，火車");
}

TEST(ScriptConverterTest, NamesRoundTrip) {
  for (ChineseScript script :
       {ChineseScript::kSimplified, ChineseScript::kTraditionalTaiwan,
        ChineseScript::kTraditionalHongKong}) {
    EXPECT_EQ(ParseChineseScript(ChineseScriptName(script)), script);
  }
  EXPECT_THROW(ParseChineseScript("klingon"), std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
