#include "common/text/parallel_corpus.h"

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
      new std::string(testing_util::MakeTempDir("parallel_corpus_test"));
  return *folder;
}

std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = Scratch() + "/" + name;
  std::ofstream file(path, std::ios::binary);
  file << text;
  return path;
}

TEST(ParallelCorpusTest, ReadsGoodLinesAndReportsBadOnes) {
  const std::string path = WriteTempFile(
      "corpus.tsv",
      "\xEF\xBB\xBFHello.\t你好。\n"  // 1: BOM
      "  Anyone can do that. \t 任何人都可以做到。\t CC-BY 2.0 (France)\r\n"
      "no tab here\n"                                // 3
      "\n"                                           // 4
      "   \r\n"                                      // 5
      "\tonly target\n"                              // 6
      "only source\t  \n"                            // 7
      "bad\xC3(utf8\tx\n"                            // 8
      "Tom\xE3\x80\x80\t\xE6\xB1\xA4\xE5\xA7\x86\n"  // 9: U+3000
      "last line\twithout newline");                 // 10
  const ParallelCorpus corpus = ReadParallelTsv(path);

  struct ExpectedPair {
    std::string source;
    std::string target;
    int64_t line_number;
  };
  const std::vector<ExpectedPair> expected_pairs = {
      {"Hello.", "你好。", 1},
      {"Anyone can do that.", "任何人都可以做到。", 2},
      {"Tom", "汤姆", 9},
      {"last line", "without newline", 10}};
  ASSERT_EQ(corpus.pairs.size(), expected_pairs.size());
  for (std::size_t i = 0; i < expected_pairs.size(); ++i) {
    EXPECT_EQ(corpus.pairs[i].source, expected_pairs[i].source) << i;
    EXPECT_EQ(corpus.pairs[i].target, expected_pairs[i].target) << i;
    EXPECT_EQ(corpus.pairs[i].line_number, expected_pairs[i].line_number);
  }

  const std::vector<std::pair<int64_t, std::string>> expected_bad = {
      {3, "no tab"},       {4, "empty line"},   {5, "empty line"},
      {6, "empty source"}, {7, "empty target"}, {8, "invalid UTF-8 at byte 3"}};
  ASSERT_EQ(corpus.bad_lines.size(), expected_bad.size());
  for (std::size_t i = 0; i < expected_bad.size(); ++i) {
    EXPECT_EQ(corpus.bad_lines[i].line_number, expected_bad[i].first);
    EXPECT_EQ(corpus.bad_lines[i].reason, expected_bad[i].second);
  }
}

// One lang1<TAB>lang2<TAB>attribution corpus read the other way round.
TEST(ParallelCorpusTest, ReadsTheColumnsGiven) {
  const std::string path =
      WriteTempFile("columns.tsv",
                    "Hello.\t你好。\tCC-BY 2.0 (France)\n"
                    "Tom\t汤姆\n"          // 2: two columns only
                    "only one column\n"    // 3
                    "\t\tattribution\n");  // 4: both sides empty
  const ParallelCorpus reversed = ReadParallelTsv(path, TsvColumns{1, 0});
  ASSERT_EQ(reversed.pairs.size(), 2u);
  EXPECT_EQ(reversed.pairs[0].source, "你好。");
  EXPECT_EQ(reversed.pairs[0].target, "Hello.");
  EXPECT_EQ(reversed.pairs[1].source, "汤姆");
  ASSERT_EQ(reversed.bad_lines.size(), 2u);
  EXPECT_EQ(reversed.bad_lines[0].reason, "no tab");
  EXPECT_EQ(reversed.bad_lines[1].reason, "empty source");

  const ParallelCorpus third = ReadParallelTsv(path, TsvColumns{2, 0});
  ASSERT_EQ(third.pairs.size(), 1u);
  EXPECT_EQ(third.pairs[0].source, "CC-BY 2.0 (France)");
  EXPECT_EQ(third.pairs[0].target, "Hello.");
  const std::vector<std::pair<int64_t, std::string>> expected_bad = {
      {2, "fewer than 3 columns"}, {3, "no tab"}, {4, "empty target"}};
  ASSERT_EQ(third.bad_lines.size(), expected_bad.size());
  for (std::size_t i = 0; i < expected_bad.size(); ++i) {
    EXPECT_EQ(third.bad_lines[i].line_number, expected_bad[i].first);
    EXPECT_EQ(third.bad_lines[i].reason, expected_bad[i].second);
  }
}

TEST(ParallelCorpusTest, InvalidColumnsAreRefused) {
  const std::string path = WriteTempFile("columns_refused.tsv", "a\tb\n");
  EXPECT_THROW(ReadParallelTsv(path, TsvColumns{1, 1}), std::invalid_argument);
  EXPECT_THROW(ReadParallelTsv(path, TsvColumns{-1, 0}), std::invalid_argument);
}

TEST(ParallelCorpusTest, EmptyFileHasNoPairs) {
  const ParallelCorpus corpus =
      ReadParallelTsv(WriteTempFile("empty_corpus.tsv", ""));
  EXPECT_TRUE(corpus.pairs.empty());
  EXPECT_TRUE(corpus.bad_lines.empty());
}

TEST(ParallelCorpusTest, MissingFileNamesIt) {
  const std::string path = Scratch() + "/no_such_corpus.tsv";
  try {
    ReadParallelTsv(path);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fanyi
