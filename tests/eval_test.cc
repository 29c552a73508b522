// Runs the real fanyi-eval binary on a tiny trained model.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/eval/bleu.h"
#include "common/eval/corpus_evaluation.h"
#include "common/text/parallel_corpus.h"
#include "common/text/script_converter.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using Strings = std::vector<std::string>;

constexpr char kEvalBinary[] = FANYI_BINARY_DIR "/bin/fanyi-eval";

// What a command printed (stdout and stderr together) and its exit code.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};

std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

// Runs fanyi-eval with `flags` on one CPU thread.
CommandResult RunEval(const Strings& flags) {
  std::string command = ShellQuote(kEvalBinary) + " --threads 1 --device cpu";
  for (const std::string& flag : flags) command += " " + ShellQuote(flag);
  command += " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  CommandResult result;
  char buffer[4096];
  size_t read;
  while ((read = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    result.output.append(buffer, read);
  }
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

Strings ReadLines(const std::string& path) {
  std::ifstream in(path);
  Strings lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

void WriteLines(const std::string& path, const Strings& lines) {
  std::ofstream out(path);
  for (const std::string& line : lines) out << line << "\n";
}

// A tiny model trained once per process, and the pairs it was trained on.
struct TinyModel {
  std::string checkpoint_dir;
  std::string pairs_path;  // The 30 pairs as TSV.
};

const TinyModel& Model() {
  static const TinyModel* model = [] {
    const std::string parent = testing_util::MakeTempDir("eval_test");
    // TrainTinyModel writes its training pairs to <parent>/tiny_model/.
    return new TinyModel{testing_util::TrainTinyModel(parent),
                         parent + "/tiny_model/pairs.tsv"};
  }();
  return *model;
}

// A number printed after `label` (e.g. "BLEU = "), as text.
std::string PrintedNumber(const std::string& output, const std::string& label) {
  std::smatch match;
  if (!std::regex_search(output, match,
                         std::regex("(^|\n)" + label + "([0-9.]+)"))) {
    return "";
  }
  return match[2].str();
}

std::string TwoDecimals(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", value);
  return text;
}

class EvalBeamTest : public ::testing::TestWithParam<int> {};

TEST_P(EvalBeamTest, ScoresItsOwnTranslationsOfMemorisedPairs) {
  const int beam_size = GetParam();
  const std::string& model_dir = Model().checkpoint_dir;
  const std::string& pairs_path = Model().pairs_path;
  const std::string output_path =
      testing_util::MakeTempDir("eval_out_" + std::to_string(beam_size)) +
      "/hypotheses.txt";

  const CommandResult result =
      RunEval({"--model_dir", model_dir, "--input", pairs_path, "--output",
               output_path, "--beam_size", std::to_string(beam_size)});
  ASSERT_EQ(result.exit_code, 0) << result.output;

  // The first score is against the references in the translations'
  // (Simplified) script; the raw references get their own line.
  const ScriptConverter to_simplified(ChineseScript::kSimplified);
  Strings references, raw_references;
  for (const SentencePair& pair : ReadParallelTsv(pairs_path).pairs) {
    references.push_back(to_simplified.Convert(pair.target));
    raw_references.push_back(pair.target);
  }
  ASSERT_EQ(references.size(), 30u);
  const Strings hypotheses = ReadLines(output_path);
  ASSERT_EQ(hypotheses.size(), references.size()) << result.output;

  const BleuScore bleu = CorpusBleu(hypotheses, references, BleuTokenizer::kZh);
  EXPECT_EQ(PrintedNumber(result.output, "BLEU = "), TwoDecimals(bleu.score))
      << result.output;
  EXPECT_EQ(PrintedNumber(result.output, "chrF2 = "),
            TwoDecimals(CorpusChrf(hypotheses, references)))
      << result.output;
  const BleuScore raw_bleu =
      CorpusBleu(hypotheses, raw_references, BleuTokenizer::kZh);
  EXPECT_EQ(PrintedNumber(result.output, "raw references: BLEU = "),
            TwoDecimals(raw_bleu.score))
      << result.output;
  EXPECT_NE(result.output.find("translations mix Simplified and Traditional"),
            std::string::npos)
      << result.output;
  const std::string mean = PrintedNumber(result.output, "confidence: mean ");
  ASSERT_FALSE(mean.empty()) << result.output;
  EXPECT_GT(std::stod(mean), 0) << result.output;
  EXPECT_LE(std::stod(mean), 1) << result.output;
  // The tiny model memorises its training pairs, written in one script.
  EXPECT_GT(bleu.score, 80.0) << result.output;
  EXPECT_LT(raw_bleu.score, bleu.score) << result.output;
}

INSTANTIATE_TEST_SUITE_P(GreedyAndBeam, EvalBeamTest, ::testing::Values(1, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 1
                                      ? std::string("Greedy")
                                      : "Beam" + std::to_string(info.param);
                         });

TEST(EvalTest, RanksShareTiesAndCorrelationsHaveTheirKnownValues) {
  EXPECT_EQ(Ranks({3, 1, 2, 2}), (std::vector<double>{4, 1, 2.5, 2.5}));
  EXPECT_EQ(Ranks({}), std::vector<double>{});
  const std::vector<double> x = {1, 2, 3, 4, 5};
  EXPECT_NEAR(PearsonCorrelation(x, {3, 5, 7, 9, 11}), 1, 1e-12);
  EXPECT_NEAR(PearsonCorrelation(x, {5, 4, 3, 2, 1}), -1, 1e-12);
  EXPECT_EQ(PearsonCorrelation(x, {2, 2, 2, 2, 2}), 0);
  EXPECT_EQ(PearsonCorrelation({1}, {2}), 0);
  // numpy.corrcoef([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])[0, 1] = 0.8.
  EXPECT_NEAR(PearsonCorrelation(x, {2, 1, 4, 3, 5}), 0.8, 1e-12);
  // Monotone but not linear: Spearman's 1, Pearson's below.
  const std::vector<double> y = {1, 4, 9, 100, 1000};
  EXPECT_LT(PearsonCorrelation(x, y), 0.9);
  EXPECT_NEAR(PearsonCorrelation(Ranks(x), Ranks(y)), 1, 1e-12);
  EXPECT_THROW(PearsonCorrelation(x, {1, 2}), std::invalid_argument);
}

TEST(EvalTest, MissingModelDirectoryIsAnErrorNamingIt) {
  const std::string missing =
      testing_util::MakeTempDir("eval_missing") + "/no_such_model";
  const CommandResult result =
      RunEval({"--model_dir", missing, "--input", Model().pairs_path});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(missing), std::string::npos) << result.output;
}

TEST(EvalTest, ReferencesWithADifferentLineCountAreRefused) {
  const std::string directory = testing_util::MakeTempDir("eval_mismatch");
  const std::string sources = directory + "/sources.txt";
  const std::string references = directory + "/references.txt";
  WriteLines(sources, {"Anyone can do that.", "She married him.",
                       "How about another piece of cake?"});
  WriteLines(references, {"任何人都可以做到。", "她嫁给了他。"});

  const CommandResult result =
      RunEval({"--model_dir", Model().checkpoint_dir, "--input", sources,
               "--references", references});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("--references has 2 lines"), std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace fanyi
