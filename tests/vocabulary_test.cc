#include "common/text/vocabulary.h"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace fanyi {
namespace {

// This test's folder in the process's scratch space.
const std::string& Scratch() {
  static const std::string* const folder =
      new std::string(testing_util::MakeTempDir("vocabulary_test"));
  return *folder;
}

using Sentences = std::vector<std::vector<std::string>>;

const Sentences kSentences = {
    {"the", "cat", "sat"}, {"the", "dog", "sat"}, {"a", "cat", "the"}};

std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = Scratch() + "/" + name;
  std::ofstream file(path, std::ios::binary);
  file << text;
  return path;
}

TEST(VocabularyTest, BuildSortsByCountThenToken) {
  const Vocabulary vocabulary = Vocabulary::Build(kSentences, 1, 0);
  const std::vector<std::string> expected = {
      "<pad>", "<unk>", "<s>", "</s>", "the", "cat", "sat", "a", "dog"};
  ASSERT_EQ(vocabulary.size(), static_cast<int64_t>(expected.size()));
  for (int64_t id = 0; id < vocabulary.size(); ++id) {
    EXPECT_EQ(vocabulary.Token(id), expected[id]) << id;
  }
}

struct BuildLimitCase {
  int64_t min_count;
  int64_t max_size;
  int64_t expected_size;
};

class BuildLimitTest : public testing::TestWithParam<BuildLimitCase> {};

TEST_P(BuildLimitTest, RespectsLimits) {
  const BuildLimitCase& c = GetParam();
  EXPECT_EQ(Vocabulary::Build(kSentences, c.min_count, c.max_size).size(),
            c.expected_size);
}

INSTANTIATE_TEST_SUITE_P(
    All, BuildLimitTest,
    testing::Values(BuildLimitCase{0, 0, 9}, BuildLimitCase{2, 0, 7},
                    BuildLimitCase{3, 0, 5}, BuildLimitCase{4, 0, 4},
                    BuildLimitCase{1, 6, 6}, BuildLimitCase{1, 4, 4},
                    BuildLimitCase{1, 100, 9}));

TEST(VocabularyTest, BuildRejectsBadLimitsAndIgnoresSpecialsInData) {
  EXPECT_THROW(Vocabulary::Build(kSentences, -1, 0), std::invalid_argument);
  EXPECT_THROW(Vocabulary::Build(kSentences, 1, 3), std::invalid_argument);
  EXPECT_THROW(Vocabulary::Build(kSentences, 1, -5), std::invalid_argument);
  const Vocabulary vocabulary =
      Vocabulary::Build({{"</s>", "<unk>", "x"}}, 1, 0);
  EXPECT_EQ(vocabulary.size(), 5);
  EXPECT_EQ(vocabulary.Id("</s>"), Vocabulary::kEosId);
}

TEST(VocabularyTest, EncodeDecode) {
  const Vocabulary vocabulary = Vocabulary::Build(kSentences, 1, 0);
  EXPECT_EQ(vocabulary.Id("<pad>"), Vocabulary::kPadId);
  EXPECT_EQ(vocabulary.Id("<unk>"), Vocabulary::kUnkId);
  EXPECT_EQ(vocabulary.Id("<s>"), Vocabulary::kBosId);
  EXPECT_EQ(vocabulary.Id("</s>"), Vocabulary::kEosId);
  EXPECT_EQ(vocabulary.Id("zebra"), Vocabulary::kUnkId);
  EXPECT_EQ(vocabulary.Encode({"the", "zebra", "dog"}),
            (std::vector<int64_t>{4, Vocabulary::kUnkId, 8}));
  EXPECT_EQ(vocabulary.Decode({Vocabulary::kBosId, 4, Vocabulary::kPadId, 5,
                               Vocabulary::kUnkId, Vocabulary::kEosId, 6}),
            (std::vector<std::string>{"the", "cat", "<unk>"}));
  EXPECT_THROW(vocabulary.Token(-1), std::out_of_range);
  EXPECT_THROW(vocabulary.Token(9), std::out_of_range);
  EXPECT_THROW(vocabulary.Decode({4, 99}), std::out_of_range);
}

TEST(VocabularyTest, SaveLoadRoundTrip) {
  const Vocabulary vocabulary =
      Vocabulary::Build({{"我", "喜", "欢", "我", "\"q\"", "a\\b"}}, 1, 0);
  const std::string path = Scratch() + "/vocabulary_roundtrip.json";
  vocabulary.Save(path);
  const Vocabulary loaded = Vocabulary::Load(path);
  ASSERT_EQ(loaded.size(), vocabulary.size());
  for (int64_t id = 0; id < vocabulary.size(); ++id) {
    EXPECT_EQ(loaded.Token(id), vocabulary.Token(id));
  }
  EXPECT_EQ(loaded.Id("我"), 4);
}

// A model from elsewhere names its own specials at ids 0-3; they round
// trip, and fanyi's own names are required otherwise.
TEST(VocabularyTest, ModelNamedSpecialsRoundTrip) {
  const std::vector<std::string> tokens = {"<fanyi_pad>", "<unk>",   "<s>",
                                           "</s>",        "<blank>", "p0"};
  EXPECT_THROW(Vocabulary{tokens}, std::invalid_argument);
  const Vocabulary vocabulary(tokens, Vocabulary::SpecialNames::kModel);
  const std::string path = Scratch() + "/vocabulary_model_named.json";
  vocabulary.Save(path);
  const Vocabulary loaded = Vocabulary::Load(path);
  EXPECT_EQ(loaded.special_names(), Vocabulary::SpecialNames::kModel);
  EXPECT_EQ(loaded.Token(Vocabulary::kPadId), "<fanyi_pad>");
  EXPECT_EQ(loaded.Id("<blank>"), 4);
  EXPECT_EQ(Vocabulary::Load(Scratch() + "/vocabulary_model_named.json")
                .Decode({4, 5, Vocabulary::kEosId, 5}),
            (std::vector<std::string>{"<blank>", "p0"}));
}

TEST(VocabularyTest, SaveToUnwritablePathNamesTheFile) {
  const Vocabulary vocabulary = Vocabulary::Build(kSentences, 1, 0);
  const std::string path = Scratch() + "/no/such/dir/v.json";
  try {
    vocabulary.Save(path);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
}

struct LoadErrorCase {
  std::string name;
  std::string contents;
  std::string expected_message_part;
};

class LoadErrorTest : public testing::TestWithParam<LoadErrorCase> {};

TEST_P(LoadErrorTest, NamesFileAndProblem) {
  const LoadErrorCase& c = GetParam();
  const std::string path = WriteTempFile(c.name + ".json", c.contents);
  try {
    Vocabulary::Load(path);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("vocabulary file " + path + ": "), std::string::npos)
        << message;
    EXPECT_NE(message.find(c.expected_message_part), std::string::npos)
        << message;
  }
}

const std::string kHeader =
    R"({"format": "fanyi-vocabulary", "format_version": 1, "tokens": )";

INSTANTIATE_TEST_SUITE_P(
    All, LoadErrorTest,
    testing::Values(
        LoadErrorCase{"not_json", "{\"format\": ", "not valid JSON ("},
        // Found by tests/fuzz/vocabulary_fuzzer: a number too large for a
        // double escaped as nlohmann's out_of_range, not a runtime_error.
        LoadErrorCase{"number_overflow", "6666e66666", "not valid JSON ("},
        LoadErrorCase{"not_object", "[1, 2]", "not a JSON object"},
        LoadErrorCase{"wrong_format",
                      R"({"format": "other", "format_version": 1,
                          "tokens": []})",
                      "\"format\" is not \"fanyi-vocabulary\""},
        LoadErrorCase{"wrong_version",
                      R"({"format": "fanyi-vocabulary", "format_version": 2,
                          "tokens": []})",
                      "format_version 2 is not supported (expected 1)"},
        LoadErrorCase{"no_tokens",
                      R"({"format": "fanyi-vocabulary", "format_version": 1})",
                      "\"tokens\" is missing or not an array"},
        LoadErrorCase{"non_string",
                      kHeader + R"(["<pad>", "<unk>", "<s>", "</s>", "a", 7]})",
                      "entry 5 is not a string"},
        LoadErrorCase{
            "duplicate",
            kHeader + R"(["<pad>", "<unk>", "<s>", "</s>", "a", "a"]})",
            "entry 5 duplicates token \"a\" (entry 4)"},
        LoadErrorCase{"misplaced_special",
                      kHeader + R"(["<unk>", "<pad>", "<s>", "</s>"]})",
                      "entry 0 is \"<unk>\" but the special token \"<pad>\""},
        LoadErrorCase{"too_short", kHeader + R"(["<pad>"]})", "has 1 tokens"},
        LoadErrorCase{"special_names",
                      R"({"format": "fanyi-vocabulary", "format_version": 1,
                          "special_names": "mine", "tokens": []})",
                      "\"special_names\" is not \"model\""}));

TEST(VocabularyTest, LoadMissingFileNamesIt) {
  const std::string path = Scratch() + "/does_not_exist.json";
  try {
    Vocabulary::Load(path);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "vocabulary file " + path + ": cannot open file");
  }
}

}  // namespace
}  // namespace fanyi
