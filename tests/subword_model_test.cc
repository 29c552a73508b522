// SubwordModel against SentencePiece itself: models trained by spm_train
// (TrainSubwordModel), text encoded by SubwordModel and by spm_encode, piece
// for piece; round trips; models it must refuse.
#include "common/text/subword_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "common/text/charsmap_normalizer.h"
#include "common/text/tokenizer.h"
#include "tests/test_util.h"
#include "trainer/subword_training.h"

namespace fanyi {
namespace {

// One column of a shared corpus file.
std::vector<std::string> Column(const std::string& file, int column) {
  std::ifstream corpus(testing_util::SharedDataPath(file));
  std::vector<std::string> sentences;
  std::string line;
  while (std::getline(corpus, line)) {
    const size_t tab = line.find('\t');
    sentences.push_back(column == 0 ? line.substr(0, tab)
                                    : line.substr(tab + 1));
  }
  return sentences;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// What spm_encode makes of each of `lines` with the model in `model_path`:
// its pieces, space-separated, one line per input line.
std::vector<std::string> SpmEncode(const std::string& model_path,
                                   const std::vector<std::string>& lines,
                                   const std::string& dir) {
  const std::string input = dir + "/encode_input.txt";
  std::ofstream out(input, std::ios::binary);
  for (const std::string& line : lines) out << line << '\n';
  out.close();
  const std::string output = dir + "/encode_output.txt";
  const std::string command =
      "spm_encode --model=" + model_path + " < " + input + " > " + output;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(output);
  std::vector<std::string> encoded;
  std::string line;
  while (std::getline(in, line)) encoded.push_back(line);
  return encoded;
}

std::string Join(const std::vector<std::string>& pieces) {
  std::string joined;
  for (const std::string& piece : pieces) {
    if (!joined.empty()) joined += ' ';
    joined += piece;
  }
  return joined;
}

// Unigram and BPE models, each checked against SentencePiece's encoder.
class SubwordModelTypeTest : public testing::TestWithParam<const char*> {};

TEST_P(SubwordModelTypeTest, EncodesAsSentencePieceDoesInBothLanguages) {
  const std::string dir =
      testing_util::MakeTempDir(std::string("subword_model_") + GetParam());
  for (int column : {0, 1}) {
    const std::vector<std::string> train =
        Column("en-zh/train_mini.tsv", column);
    SubwordTrainingOptions options;
    options.model_type = GetParam();
    // Chinese needs a piece per character (coverage 1.0): 1,444 here.
    options.vocab_size = column == 0 ? 400 : 2000;
    const SubwordModel model = TrainSubwordModel(train, options, dir);
    EXPECT_GT(model.size(), 100);
    EXPECT_LE(model.size(), options.vocab_size);
    const std::string model_path = dir + "/model" + std::to_string(column);
    WriteFile(model_path, model.serialized());
    // Unseen sentences (with characters no piece covers), odd spacing.
    std::vector<std::string> lines = Column("en-zh/dev.tsv", column);
    lines.push_back("  two   spaces and 東京 and Ωmega ");
    lines.push_back("x");
    const std::vector<std::string> expected = SpmEncode(model_path, lines, dir);
    ASSERT_EQ(expected.size(), lines.size());
    const SubwordModel loaded =
        SubwordModel::FromSerialized(model.serialized());
    EXPECT_FALSE(loaded.normalizes());  // fanyi's trainer: "identity".
    size_t same = 0;
    size_t total_pieces = 0;
    size_t total_bytes = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::vector<std::string> pieces = loaded.Encode(lines[i]);
      EXPECT_EQ(Join(pieces), expected[i]) << lines[i];
      same += Join(pieces) == expected[i];
      // The text comes back (the last two lines' spacing does not).
      if (i + 2 < lines.size()) {
        EXPECT_EQ(SubwordModel::Decode(pieces), lines[i]);
      }
      total_pieces += pieces.size();
      total_bytes += lines[i].size();
    }
    std::cout << GetParam() << ", column " << column << ": " << same << " of "
              << lines.size() << " lines encoded as spm_encode does\n";
    // Subwords, not bytes: under half a piece per byte.
    EXPECT_LT(total_pieces * 2, total_bytes);
  }
  EXPECT_EQ(SubwordModel::Decode({"▁two", "▁spa", "ces"}), "two spaces");
}

INSTANTIATE_TEST_SUITE_P(UnigramAndBpe, SubwordModelTypeTest,
                         testing::Values("unigram", "bpe"));

// spm_train's defaults (the "nmt_nfkc" rule, as Argos Translate's models
// are trained): SubwordModel applies the model's precompiled map and gives
// spm_encode's pieces on text full of what NFKC and the NMT rules change.
TEST_P(SubwordModelTypeTest, NormalizesAsSentencePieceDoes) {
  const std::string dir =
      testing_util::MakeTempDir(std::string("subword_nmt_nfkc_") + GetParam());
  const std::vector<std::string> lines_to_check = {
      "ＦＵＬＬ－ｗｉｄｔｈ ＡＢＣ １２３，ｏｋ？",
      "the ﬁrst ﬂoor, ① ② ③, ½ cup, 5 ㎏, ™ and ℡",
      "non\u00A0breaking, ideographic\u3000space, thin\u2009space",
      "zero\u200Bwidth, soft\u00ADhyphen, joiner\u200Dhere",
      "cafe\u0301 (combining accent) and café",
      "ｶﾀｶﾅ and ㈱ and ㍻ and Ⅻ",
      "  leading and trailing spaces   ",
      "runs    of     spaces\tand\ttabs",
      "a literal ▁ mark and one at the end ▁",
      "▁",
      "",
      "   ",
      "control\x01"
      "char and\x7F delete and \xC2\x85 next line",
      "bad \xff byte and \xed\xa0\x80 surrogate",
      "它说：“你好！”（ｏｋ）",
  };
  for (int column : {0, 1}) {
    const std::string input = dir + "/input.txt";
    std::ofstream out(input);
    for (const std::string& line : Column("en-zh/train_mini.tsv", column)) {
      out << line << '\n';
    }
    out.close();
    const std::string prefix = dir + "/m" + std::to_string(column);
    const std::string command =
        "spm_train --input=" + input + " --model_prefix=" + prefix +
        " --vocab_size=" + (column == 0 ? "400" : "2000") +
        " --model_type=" + GetParam() +
        " --character_coverage=1.0 --minloglevel=2 > /dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream file(prefix + ".model", std::ios::binary);
    const SubwordModel model = SubwordModel::FromSerialized(
        std::string(std::istreambuf_iterator<char>(file), {}));
    std::vector<std::string> lines = Column("en-zh/dev.tsv", column);
    lines.insert(lines.end(), lines_to_check.begin(), lines_to_check.end());
    const std::vector<std::string> expected =
        SpmEncode(prefix + ".model", lines, dir);
    ASSERT_EQ(expected.size(), lines.size());
    // The Tokenizer's subword mode hands such a model the text as it came.
    const Tokenizer tokenizer(column == 0 ? "en" : "zh",
                              std::make_shared<const SubwordModel>(model));
    EXPECT_TRUE(model.normalizes());
    size_t same = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string pieces = Join(model.Encode(lines[i]));
      EXPECT_EQ(pieces, expected[i]) << lines[i];
      same += pieces == expected[i];
      if (lines[i].find('\xff') == std::string::npos &&
          lines[i].find('\xed') == std::string::npos) {  // Valid UTF-8.
        EXPECT_EQ(Join(tokenizer.Tokenize(lines[i])), expected[i]) << lines[i];
      }
    }
    std::cout << GetParam() << " nmt_nfkc, column " << column << ": " << same
              << " of " << lines.size() << " lines as spm_encode\n";
  }
}

// A precompiled map as SentencePiece stores one: a 4-byte little-endian
// trie size, Darts units, then NUL-terminated outputs. The trie here holds
// one rule, "a", whose output starts at `value`.
std::string HandMadeMap(uint32_t value, const std::string& outputs) {
  std::vector<uint32_t> units(98, 0);
  units[0] = 1u << 10;  // The root: children at 1 ^ byte.
  // 'a' (0x61) at 1 ^ 0x61 = 96: its label, a leaf, its leaf at 96 ^ 1.
  units[96] = (1u << 10) | (1u << 8) | 0x61;
  units[97] = (1u << 31) | value;
  std::string map(4, '\0');
  const uint32_t trie_bytes = static_cast<uint32_t>(4 * units.size());
  for (int i = 0; i < 4; ++i) map[i] = static_cast<char>(trie_bytes >> (8 * i));
  for (uint32_t unit : units) {
    for (int i = 0; i < 4; ++i) map += static_cast<char>(unit >> (8 * i));
  }
  return map + outputs;
}

TEST(CharsMapNormalizerTest, AppliesAMapAndRefusesHostileOnes) {
  const CharsMapNormalizer normalizer(HandMadeMap(0, std::string("b\0", 2)));
  EXPECT_EQ(normalizer.Normalize("xay"), "xby");
  bool leading = false;
  EXPECT_EQ(normalizer.Normalize("  a   a  ", &leading), "b b");
  EXPECT_TRUE(leading);
  EXPECT_EQ(normalizer.Normalize("\xff\xc3"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  // A rule whose output lies past the outputs (found by
  // subword_model_fuzzer: it used to load and then fail every text holding
  // "a"); an output with two spaces in a row; one longer than the bound;
  // outputs without their NUL; a trie larger than the map.
  for (const std::string& map :
       {HandMadeMap(1000, std::string("b\0", 2)),
        HandMadeMap(0, std::string("b  c\0", 5)),
        HandMadeMap(
            0,
            std::string(CharsMapNormalizer::kMaxOutputBytes + 1, 'b') + '\0'),
        HandMadeMap(0, "b"), HandMadeMap(0, "").substr(0, 100),
        std::string("\xff\xff\xff\x7f", 4)}) {
    EXPECT_THROW(CharsMapNormalizer{map}, std::invalid_argument);
  }
}

// A model of one column of the mini training corpus, trained once.
std::shared_ptr<const SubwordModel> MiniModel(int column) {
  static std::shared_ptr<const SubwordModel> models[2];
  if (!models[column]) {
    SubwordTrainingOptions options;
    options.vocab_size = column == 0 ? 400 : 2000;
    models[column] = std::make_shared<const SubwordModel>(
        TrainSubwordModel(Column("en-zh/train_mini.tsv", column), options,
                          testing_util::MakeTempDir("subword_tokenizer")));
  }
  return models[column];
}

// The Tokenizer's subword mode: placeholders whole, the spacing around them
// kept, case kept, whitespace made spaces, control characters dropped.
TEST(SubwordModelTest, TokenizerKeepsPlaceholdersAndSpacing) {
  const Tokenizer english("en", MiniModel(0));
  EXPECT_EQ(english.subwords(), MiniModel(0));
  const std::string sentence = "Tom paid ｟1｠ for ｟2｠x, at ｟3｠.";
  const std::vector<std::string> tokens = english.Tokenize(sentence);
  EXPECT_EQ(english.Detokenize(tokens), sentence);
  std::vector<std::string> placeholders;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].rfind("｟", 0) == 0) {
      placeholders.push_back(tokens[i]);
      // Each one spaced from the word before: a lone "▁" ahead of it.
      EXPECT_EQ(tokens.at(i - 1), "▁") << i;
    }
  }
  EXPECT_EQ(placeholders,
            (std::vector<std::string>{"｟1｠", "｟2｠", "｟3｠"}));
  EXPECT_EQ(tokens.front(), "▁Tom");  // Not lowercased.
  EXPECT_EQ(english.Detokenize(english.Tokenize("a\tb\n c\x01"
                                                "d")),
            "a b cd");

  const Tokenizer chinese("zh", MiniModel(1));
  EXPECT_TRUE(chinese.character_mode());
  const std::string chinese_sentence = "它要｟1｠元，在｟2｠。";
  const std::vector<std::string> chinese_tokens =
      chinese.Tokenize(chinese_sentence);
  EXPECT_EQ(chinese.Detokenize(chinese_tokens), chinese_sentence);
  // No spaces around them, so no "▁" token before them either.
  const auto one =
      std::find(chinese_tokens.begin(), chinese_tokens.end(), "｟1｠");
  ASSERT_NE(one, chinese_tokens.end());
  EXPECT_NE(*(one - 1), "▁");
  EXPECT_NE(std::find(chinese_tokens.begin(), chinese_tokens.end(), "｟2｠"),
            chinese_tokens.end());
}

TEST(SubwordModelTest, RefusesWhatItCannotRead) {
  EXPECT_THROW(SubwordModel::FromSerialized("not a model"),
               std::invalid_argument);
  EXPECT_THROW(SubwordModel::FromSerialized(""), std::invalid_argument);
  // A character model; words without their leading "▁".
  const std::string dir = testing_util::MakeTempDir("subword_refusals");
  const std::string input = dir + "/input.txt";
  std::ofstream out(input);
  for (const std::string& line : Column("en-zh/train_mini.tsv", 0)) {
    out << line << '\n';
  }
  out.close();
  for (const std::string& flags :
       {std::string("--model_type=char --normalization_rule_name=identity"),
        std::string("--normalization_rule_name=identity "
                    "--add_dummy_prefix=false")}) {
    const std::string command =
        "spm_train --input=" + input + " --model_prefix=" + dir +
        "/m --vocab_size=200 --minloglevel=2 " + flags + " > /dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream model(dir + "/m.model", std::ios::binary);
    const std::string bytes(std::istreambuf_iterator<char>(model), {});
    EXPECT_THROW(SubwordModel::FromSerialized(bytes), std::invalid_argument)
        << flags;
  }
}

TEST(SubwordModelTest, TrainingRefusesBadOptions) {
  const std::string dir = testing_util::MakeTempDir("subword_options");
  const std::vector<std::string> sentences = {"a b c", "d e f"};
  SubwordTrainingOptions options;
  options.vocab_size = 2;
  EXPECT_THROW(TrainSubwordModel(sentences, options, dir),
               std::invalid_argument);
  options = SubwordTrainingOptions();
  options.character_coverage = 0;
  EXPECT_THROW(TrainSubwordModel(sentences, options, dir),
               std::invalid_argument);
  EXPECT_THROW(TrainSubwordModel({}, SubwordTrainingOptions(), dir),
               std::invalid_argument);
  options = SubwordTrainingOptions();
  options.model_type = "wordpiece";
  EXPECT_THROW(TrainSubwordModel(sentences, options, dir),
               std::invalid_argument);
  options = SubwordTrainingOptions();
  options.spm_train = "/nonexistent/spm_train";
  EXPECT_THROW(TrainSubwordModel(sentences, options, dir), std::runtime_error);
}

}  // namespace
}  // namespace fanyi
