#include "common/text/clause_splitter.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fanyi {
namespace {

using Tokens = std::vector<std::string>;

Tokens Words(const std::string& text) {
  std::istringstream in(text);
  Tokens tokens;
  for (std::string token; in >> token;) tokens.push_back(token);
  return tokens;
}

TEST(ClauseSplitterTest, KeepsASentenceThatFits) {
  const Tokens tokens = Words("i like tea .");
  EXPECT_EQ(SplitIntoClauses(tokens, 4), std::vector<Tokens>{tokens});
}

TEST(ClauseSplitterTest, CutsAfterASemicolonBeforeAComma) {
  const Tokens tokens =
      Words("we stayed home , it rained ; the next day we went out .");
  EXPECT_EQ(SplitIntoClauses(tokens, 10),
            (std::vector<Tokens>{Words("we stayed home , it rained ;"),
                                 Words("the next day we went out .")}));
}

TEST(ClauseSplitterTest, CutsBeforeAConjunctionWhenThereIsNoPunctuation) {
  const Tokens tokens = Words(
      "he went home and cooked dinner for his family because his wife "
      "was working late");
  EXPECT_EQ(SplitIntoClauses(tokens, 10),
            (std::vector<Tokens>{Words("he went home and cooked dinner for his "
                                       "family"),
                                 Words("because his wife was working late")}));
}

TEST(ClauseSplitterTest, EveryPartFitsAndNothingIsLost) {
  Tokens tokens;
  for (int i = 0; i < 100; ++i) {
    tokens.push_back(i % 7 == 6 ? "," : "w" + std::to_string(i));
  }
  const auto parts = SplitIntoClauses(tokens, 12);
  Tokens joined;
  for (const Tokens& part : parts) {
    EXPECT_LE(part.size(), 12u);
    EXPECT_FALSE(part.empty());
    joined.insert(joined.end(), part.begin(), part.end());
  }
  EXPECT_EQ(joined, tokens);
}

TEST(ClauseSplitterTest, RefusesAZeroLimit) {
  EXPECT_THROW(SplitIntoClauses(Words("a b"), 0), std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
