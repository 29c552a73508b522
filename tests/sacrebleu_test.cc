// Compares CorpusBleu and CorpusChrf with the Python sacreBLEU package on a
// fixed, varied corpus. Skipped when `python3 -c "import sacrebleu"` fails.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/eval/bleu.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using Strings = std::vector<std::string>;

// Sentences taken from en-zh/dev.tsv: enough for a corpus-level comparison.
constexpr int kCorpusSize = 300;

// Prints, for every case in the JSON file argv[1], sacreBLEU's corpus BLEU
// statistics with the case's tokenizer and its default chrF2, as one JSON line.
constexpr char kSacrebleuScript[] = R"(
import json
import sys

import sacrebleu

with open(sys.argv[1], encoding='utf-8') as f:
    cases = json.load(f)
results = {}
for case in cases:
    hyps, refs = case['hypotheses'], case['references']
    bleu = sacrebleu.corpus_bleu(hyps, [refs], tokenize=case['tokenize'])
    chrf = sacrebleu.corpus_chrf(hyps, [refs])
    results[case['name']] = {
        'score': bleu.score, 'precisions': bleu.precisions, 'bp': bleu.bp,
        'sys_len': bleu.sys_len, 'ref_len': bleu.ref_len, 'chrf': chrf.score}
print(json.dumps({'version': sacrebleu.__version__, 'cases': results}))
)";

// One corpus scored by both implementations.
struct CorpusCase {
  std::string name;
  BleuTokenizer tokenizer;
  Strings hypotheses;
  Strings references;
};

std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Runs `command` through the shell; returns its exit status and its stdout.
std::pair<int, std::string> RunCommand(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::string output;
  char buffer[4096];
  size_t read;
  while ((read = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    output.append(buffer, read);
  }
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

bool SacrebleuInstalled() {
  return std::system("python3 -c 'import sacrebleu' >/dev/null 2>&1") == 0;
}

// The first `limit` pairs of a TSV file as (sources, targets).
std::pair<Strings, Strings> ReadTsvColumns(const std::string& path, int limit) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  Strings sources;
  Strings targets;
  std::string line;
  while (static_cast<int>(sources.size()) < limit && std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    sources.push_back(line.substr(0, tab));
    const size_t end = line.find('\t', tab + 1);
    targets.push_back(line.substr(
        tab + 1, end == std::string::npos ? std::string::npos : end - tab - 1));
  }
  return {sources, targets};
}

// Splits valid UTF-8 into code points, so edits never cut a character.
Strings SplitCodePoints(const std::string& text) {
  Strings characters;
  for (size_t i = 0; i < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80   ? 1
                          : lead < 0xE0 ? 2
                          : lead < 0xF0 ? 3
                                        : 4;
    characters.push_back(text.substr(i, length));
    i += length;
  }
  return characters;
}

Strings SplitWords(const std::string& text) {
  std::istringstream in(text);
  Strings words;
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

std::string Join(const Strings& parts, const std::string& separator) {
  std::string joined;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) joined += separator;
    joined += parts[i];
  }
  return joined;
}

// Deterministic edits of a token sequence (characters or words): every kind
// of difference BLEU and chrF must count (missing, reordered, extra,
// repeated and foreign tokens). `other` is an unrelated sentence.
Strings PerturbTokens(Strings tokens, const Strings& other, int kind,
                      std::mt19937& rng) {
  auto pick = [&rng](size_t size) { return size == 0 ? 0 : rng() % size; };
  switch (kind) {
    case 0:  // Identical.
      break;
    case 1:  // Drop one or two tokens.
      for (int i = 0; i < 2 && tokens.size() > 1; ++i) {
        tokens.erase(tokens.begin() + pick(tokens.size()));
      }
      break;
    case 2:  // Swap neighbours.
      if (tokens.size() > 1) {
        const size_t i = pick(tokens.size() - 1);
        std::swap(tokens[i], tokens[i + 1]);
      }
      break;
    case 3:  // Shuffle everything.
      std::shuffle(tokens.begin(), tokens.end(), rng);
      break;
    case 4:  // Truncate to about half.
      tokens.resize((tokens.size() + 1) / 2);
      break;
    case 5:  // Empty.
      tokens.clear();
      break;
    case 6:  // Replace tokens with ones from another sentence.
      for (size_t i = 0; i < tokens.size() && !other.empty(); i += 3) {
        tokens[i] = other[pick(other.size())];
      }
      break;
    case 7:  // Repeat a span (tests n-gram count clipping).
      if (!tokens.empty()) {
        const size_t start = pick(tokens.size());
        tokens.insert(tokens.end(), tokens.begin() + start, tokens.end());
      }
      break;
    case 8:  // Another sentence entirely.
      tokens = other;
      break;
    default:  // Keep the first and last tokens only.
      if (tokens.size() > 2) tokens = {tokens.front(), tokens.back()};
      break;
  }
  return tokens;
}

constexpr int kPerturbationKinds = 10;

// Latin runs, digits and ASCII/full-width punctuation spliced into Chinese:
// the zh tokenizer splits Chinese characters but keeps latin runs whole, and
// 13a rules apply inside them.
const Strings& MixedScriptInserts() {
  static const Strings* inserts = new Strings{
      "iPhone 12",    "Tom's",   "3.5%",  "(OK)", "U.S.A.", "1,000",  "e-mail",
      "，２０２４年", "“Hello”", "NASA!", "  ",   "A&B",    "x86_64", "？！"};
  return *inserts;
}

// English words and punctuation that exercise the 13a rules.
const Strings& EnglishInserts() {
  static const Strings* inserts = new Strings{
      "don't",   "U.S.", "1,000.50", "e-mail", "&quot;", "&amp;", "\"quoted\"",
      "(maybe)", "--",   "3.14",     "Tom's",  "end.",   "?!",    "a/b"};
  return *inserts;
}

std::string InsertAt(const Strings& pieces, const std::string& insert,
                     size_t position, const std::string& separator) {
  Strings joined = pieces;
  joined.insert(joined.begin() + std::min(position, joined.size()), insert);
  return Join(joined, separator);
}

// Chinese hypotheses for the dev references: perturbed characters, every
// fourth also carrying a latin/punctuation insert.
CorpusCase ChineseCorpus(const Strings& references) {
  CorpusCase corpus{"zh_dev_300", BleuTokenizer::kZh, {}, references};
  std::mt19937 rng(20240601);
  const Strings& inserts = MixedScriptInserts();
  for (size_t i = 0; i < references.size(); ++i) {
    const Strings other =
        SplitCodePoints(references[(i * 7 + 13) % references.size()]);
    Strings characters = PerturbTokens(SplitCodePoints(references[i]), other,
                                       i % kPerturbationKinds, rng);
    std::string hypothesis = Join(characters, "");
    if (i % 4 == 3) {
      hypothesis = InsertAt(characters, inserts[i % inserts.size()],
                            rng() % (characters.size() + 1), "");
    }
    if (i % 23 == 5) hypothesis = " " + Join(characters, " ") + " ";
    corpus.hypotheses.push_back(hypothesis);
  }
  return corpus;
}

// English hypotheses for the dev sources (as references) with word edits.
CorpusCase EnglishCorpus(const Strings& references) {
  CorpusCase corpus{"13a_dev_300", BleuTokenizer::k13a, {}, references};
  std::mt19937 rng(7);
  const Strings& inserts = EnglishInserts();
  for (size_t i = 0; i < references.size(); ++i) {
    const Strings other =
        SplitWords(references[(i * 11 + 3) % references.size()]);
    Strings words = PerturbTokens(SplitWords(references[i]), other,
                                  i % kPerturbationKinds, rng);
    std::string hypothesis = Join(words, " ");
    if (i % 3 == 1) {
      hypothesis = InsertAt(words, inserts[i % inserts.size()],
                            rng() % (words.size() + 1), " ");
    }
    if (i % 17 == 4) {
      for (char& c : hypothesis)
        c = std::tolower(static_cast<unsigned char>(c));
    }
    corpus.hypotheses.push_back(hypothesis);
  }
  return corpus;
}

// Every corpus compared: the two large varied ones, plus edge cases where
// sacreBLEU takes special paths (no hypothesis tokens, no 3- or 4-grams at
// all, hypotheses longer than references).
std::vector<CorpusCase> AllCases() {
  const auto [sources, targets] = ReadTsvColumns(
      testing_util::SharedDataPath("en-zh/dev.tsv"), kCorpusSize);
  std::vector<CorpusCase> cases = {ChineseCorpus(targets),
                                   EnglishCorpus(sources)};
  const Strings few_targets(targets.begin(), targets.begin() + 20);
  const Strings few_sources(sources.begin(), sources.begin() + 20);

  cases.push_back(
      {"zh_identical", BleuTokenizer::kZh, few_targets, few_targets});
  cases.push_back({"zh_all_empty", BleuTokenizer::kZh,
                   Strings(few_targets.size(), ""), few_targets});
  CorpusCase two_characters{
      "zh_two_characters", BleuTokenizer::kZh, {}, few_targets};
  CorpusCase doubled{"zh_doubled", BleuTokenizer::kZh, {}, few_targets};
  CorpusCase one_word{"13a_one_word", BleuTokenizer::k13a, {}, few_sources};
  for (size_t i = 0; i < few_targets.size(); ++i) {
    const Strings characters = SplitCodePoints(few_targets[i]);
    two_characters.hypotheses.push_back(Join(
        Strings(characters.begin(),
                characters.begin() + std::min<size_t>(2, characters.size())),
        ""));
    doubled.hypotheses.push_back(few_targets[i] + few_targets[i]);
    one_word.hypotheses.push_back(SplitWords(few_sources[i])[0]);
  }
  cases.push_back(two_characters);
  cases.push_back(doubled);
  cases.push_back(one_word);
  return cases;
}

// sacreBLEU's results for AllCases(), computed once per process.
struct SacrebleuRun {
  bool installed = false;
  std::string version;
  nlohmann::json cases;  // name -> {score, precisions, bp, ...}
};

const SacrebleuRun& RunSacrebleu() {
  static const SacrebleuRun* run = [] {
    auto* result = new SacrebleuRun;
    result->installed = SacrebleuInstalled();
    if (!result->installed) return result;

    const std::string directory = testing_util::MakeTempDir("sacrebleu_test");
    const std::string script_path = directory + "/score.py";
    const std::string data_path = directory + "/cases.json";
    std::ofstream(script_path) << kSacrebleuScript;
    nlohmann::json data = nlohmann::json::array();
    for (const CorpusCase& corpus : AllCases()) {
      data.push_back(
          {{"name", corpus.name},
           {"tokenize", corpus.tokenizer == BleuTokenizer::kZh ? "zh" : "13a"},
           {"hypotheses", corpus.hypotheses},
           {"references", corpus.references}});
    }
    std::ofstream(data_path) << data.dump();

    const auto [exit_code, output] = RunCommand(
        "python3 " + ShellQuote(script_path) + " " + ShellQuote(data_path));
    if (exit_code != 0) {
      throw std::runtime_error("sacreBLEU script failed (exit " +
                               std::to_string(exit_code) + "): " + output);
    }
    const nlohmann::json parsed = nlohmann::json::parse(output);
    result->version = parsed.at("version").get<std::string>();
    result->cases = parsed.at("cases");
    std::cout << "Comparing with sacrebleu " << result->version << "\n";
    return result;
  }();
  return *run;
}

class SacrebleuTest : public ::testing::TestWithParam<CorpusCase> {
 protected:
  void SetUp() override {
    if (!RunSacrebleu().installed) {
      // CI must compare (scripts/test.sh installs it); by hand, a missing
      // package skips.
      if (const char* ci = std::getenv("CI"); ci != nullptr && *ci != '\0') {
        FAIL() << "sacrebleu is not installed for python3 "
                  "(pip install 'sacrebleu>=2.3,<3'), and CI must compare";
      }
      GTEST_SKIP() << "sacrebleu is not installed for python3 "
                      "(pip install 'sacrebleu>=2.3,<3'); comparison skipped";
    }
  }
};

// Tolerance of the comparison: sacreBLEU reports two decimals.
constexpr double kTolerance = 0.01;

TEST_P(SacrebleuTest, BleuAndChrfMatchSacrebleu) {
  const CorpusCase& corpus = GetParam();
  const SacrebleuRun& run = RunSacrebleu();
  RecordProperty("sacrebleu_version", run.version);
  ASSERT_TRUE(run.cases.contains(corpus.name));
  const nlohmann::json& expected = run.cases.at(corpus.name);

  const BleuScore bleu =
      CorpusBleu(corpus.hypotheses, corpus.references, corpus.tokenizer);
  EXPECT_NEAR(bleu.score, expected.at("score").get<double>(), kTolerance);
  for (int n = 0; n < 4; ++n) {
    EXPECT_NEAR(bleu.precisions[n],
                expected.at("precisions").at(n).get<double>(), kTolerance)
        << (n + 1) << "-gram precision";
  }
  EXPECT_NEAR(bleu.brevity_penalty, expected.at("bp").get<double>(),
              kTolerance);
  EXPECT_EQ(bleu.hypothesis_length, expected.at("sys_len").get<int64_t>());
  EXPECT_EQ(bleu.reference_length, expected.at("ref_len").get<int64_t>());
  EXPECT_NEAR(CorpusChrf(corpus.hypotheses, corpus.references),
              expected.at("chrf").get<double>(), kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Corpora, SacrebleuTest,
                         ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<CorpusCase>& info) {
                           return info.param.name;
                         });

// The large corpora must be varied for the comparison to mean anything:
// full-size, neither perfect nor hopeless, with empty hypotheses.
TEST(SacrebleuCorpusTest, LargeCorporaAreVaried) {
  for (const CorpusCase& corpus : AllCases()) {
    if (corpus.name.find("_dev_") == std::string::npos) continue;
    SCOPED_TRACE(corpus.name);
    EXPECT_EQ(corpus.hypotheses.size(), static_cast<size_t>(kCorpusSize));
    const BleuScore bleu =
        CorpusBleu(corpus.hypotheses, corpus.references, corpus.tokenizer);
    EXPECT_GT(bleu.score, 20.0);
    EXPECT_LT(bleu.score, 90.0);
    EXPECT_GT(std::count(corpus.hypotheses.begin(), corpus.hypotheses.end(),
                         std::string()),
              0);
  }
}

}  // namespace
}  // namespace fanyi
