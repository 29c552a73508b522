// CTranslate2 models imported as fanyi checkpoints compute what CTranslate2
// computes: random-weight models of the three families fanyi serves
// (OpenNMT-py as Argos builds them, Marian as OPUS-MT, M2M-100 and NLLB),
// written by CTranslate2's own Python specs API, give each token the
// log-probability CTranslate2's score_batch gives it, and translate as its
// translate_batch does, greedy and beam 4
// (tests/ctranslate2_translations.py).
#include "common/model/ctranslate2_import.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/log_softmax.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "common/decoding/decoder_selection.h"
#include "common/decoding/greedy_decoder.h"
#include "common/decoding/packed_transformer.h"
#include "common/model/argos_package.h"
#include "common/model/checkpoint.h"
#include "common/pipeline/translator.h"
#include "common/text/vocabulary.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The models and CTranslate2's translations, written once per test program
// by the python3 on PATH (scripts/test.sh installs ctranslate2 for it).
struct Translations {
  std::string dir;
  nlohmann::json expected;
};

const Translations& Made() {
  static const Translations* made = [] {
    auto* result =
        new Translations{testing_util::MakeTempDir("ctranslate2-import"), {}};
    const std::string log = result->dir + "/python.log";
    const std::string command =
        std::string("python3 '") + FANYI_SOURCE_DIR +
        "/tests/ctranslate2_translations.py' '" + result->dir + "' '" +
        testing_util::SharedDataPath("en-zh/train_mini.tsv") + "' >'" + log +
        "' 2>&1";
    if (std::system(command.c_str()) != 0) {
      throw std::runtime_error(
          "tests/ctranslate2_translations.py failed (python3 needs the "
          "ctranslate2 and sentencepiece packages: pip install ctranslate2 "
          "sentencepiece): " +
          ReadFile(log));
    }
    result->expected =
        nlohmann::json::parse(ReadFile(result->dir + "/expected.json"));
    return result;
  }();
  return *made;
}

std::vector<std::string> Split(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> tokens;
  for (std::string token; in >> token;) tokens.push_back(token);
  return tokens;
}

std::string Join(const Vocabulary& vocabulary,
                 const std::vector<int64_t>& ids) {
  std::string text;
  for (int64_t id : ids) {
    text += (text.empty() ? "" : " ") + vocabulary.Token(id);
  }
  return text;
}

Checkpoint Load(const std::string& family) {
  return LoadCheckpoint(Made().dir + "/" + family, torch::kCPU);
}

class ImportedFamilyTest : public ::testing::TestWithParam<std::string> {};

// Teacher-forced on CTranslate2's greedy translations, every token (and
// the </s> after them) gets the log-probability score_batch gave it.
TEST_P(ImportedFamilyTest, ScoresEachTokenAsCTranslate2) {
  c10::InferenceMode inference;
  const nlohmann::json& expected = Made().expected.at(GetParam());
  Checkpoint checkpoint = Load(GetParam());
  const torch::Device cpu(torch::kCPU);
  for (size_t i = 0; i < expected.at("sources").size(); ++i) {
    SCOPED_TRACE("sentence " + std::to_string(i));
    const std::vector<int64_t> source = checkpoint.source_vocabulary.Encode(
        Split(expected["sources"][i].get<std::string>()));
    const std::vector<int64_t> target = checkpoint.target_vocabulary.Encode(
        Split(expected["greedy"][i].get<std::string>()));
    std::vector<int64_t> input = {Vocabulary::kBosId};
    input.insert(input.end(), target.begin(), target.end());
    // [tgt_len + 1, vocab]
    const torch::Tensor log_probs = at::log_softmax(
        checkpoint.model->forward(
            MakeSourceTensor({source}, checkpoint.model->config(), cpu),
            PadRows({input}, cpu)),
        -1)[0];
    const nlohmann::json& ct2 = expected["greedy_log_probs"][i];
    ASSERT_EQ(ct2.size(), target.size() + 1);
    for (size_t t = 0; t <= target.size(); ++t) {
      const int64_t token = t < target.size() ? target[t] : Vocabulary::kEosId;
      EXPECT_NEAR(log_probs[t][token].item<double>(), ct2[t].get<double>(),
                  1e-3)
          << "token " << t;
    }
  }
}

// How many of `expected`'s translations (CTranslate2's, LENGTH tokens
// each) the model gives, with beam `beam`; the others are printed, but
// for int8.
size_t SameTranslations(const std::string& family, Checkpoint& checkpoint,
                        int beam, const std::string& key) {
  const nlohmann::json& expected = Made().expected.at(family);
  const int64_t length = Made().expected.at("length").get<int64_t>();
  DecodingOptions options;
  options.max_length = length;
  options.min_length = length;
  options.length_ratio = 0;
  options.length_offset = length;
  std::vector<EncodedSource> sources;
  for (const auto& source : expected.at("sources")) {
    sources.push_back(
        {checkpoint.source_vocabulary.Encode(Split(source.get<std::string>())),
         beam});
  }
  ContinuousDecoder decoder(*checkpoint.model, options, 1.0);
  const std::vector<ContinuousDecoder::Finished> translations =
      decoder.DecodeAll(sources);
  size_t same = 0;
  for (size_t i = 0; i < translations.size(); ++i) {
    const std::string ours =
        Join(checkpoint.target_vocabulary, translations[i].target_ids);
    const std::string theirs = expected.at(key)[i].get<std::string>();
    same += ours == theirs;
    // int8 moves many tiny-model translations (below); float32 few.
    if (ours != theirs && key.find("_int8") == std::string::npos) {
      std::cout << family << " " << key << " sentence " << i
                << ":\n  fanyi:       " << ours << "\n  CTranslate2: " << theirs
                << "\n";
    }
  }
  std::cout << family << " " << key << ": " << same << " of "
            << translations.size() << " as CTranslate2's\n";
  return same;
}

// Greedy and beam 4, every translation LENGTH tokens long (as
// min_decoding_length = max_decoding_length make CTranslate2's): at least
// 99% of the sentences come out token for token as CTranslate2's, with
// LibTorch's step and, for the layers it computes, the packed float32
// step. The packed int8 step's agreement with CTranslate2's int8 is
// reported.
TEST_P(ImportedFamilyTest, TranslatesAsCTranslate2) {
  Checkpoint checkpoint = Load(GetParam());
  const size_t sentences = Made().expected.at(GetParam()).at("sources").size();
  const bool packs = PackedTransformer::Computes(checkpoint.model->config());
  for (const char* compute_type : {"libtorch", "float32", "int8"}) {
    if (std::string(compute_type) != "libtorch" && !packs) continue;
    SCOPED_TRACE(compute_type);
    if (std::string(compute_type) == "libtorch") {
      SelectDecoder(*checkpoint.model, "libtorch", "float32");
    } else {
      SelectDecoder(*checkpoint.model, "packed", compute_type);
      ASSERT_NE(checkpoint.model->inference_kernel(), nullptr);
    }
    const std::string suffix =
        std::string(compute_type) == "int8" ? "_int8" : "";
    for (const auto& [beam, key] : {std::pair{1, "greedy"}, {4, "beam"}}) {
      const size_t same =
          SameTranslations(GetParam(), checkpoint, beam, key + suffix);
      if (suffix.empty()) EXPECT_GE(same, 0.99 * sentences) << key;
    }
  }
  // What int8 moves in CTranslate2's own translations, for scale.
  const nlohmann::json& expected = Made().expected.at(GetParam());
  for (const char* key : {"greedy", "beam"}) {
    size_t same = 0;
    for (size_t i = 0; i < sentences; ++i) {
      same += expected[key][i] == expected[std::string(key) + "_int8"][i];
    }
    std::cout << GetParam() << " " << key << ": CTranslate2's int8 gives "
              << same << " of " << sentences << " as its float32\n";
  }
}

// `pieces` joined by spaces, as CTranslate2's translations are written.
std::string JoinPieces(const std::vector<std::string>& pieces) {
  std::string joined;
  for (const std::string& piece : pieces) {
    joined += (joined.empty() ? "" : " ") + piece;
  }
  return joined;
}

// The pieces of each of `lines` (space-separated).
std::vector<std::vector<std::string>> SplitLines(const nlohmann::json& lines) {
  std::vector<std::vector<std::string>> pieces;
  for (const auto& line : lines)
    pieces.push_back(Split(line.get<std::string>()));
  return pieces;
}

// How many of `sources` the translator's beam `beam` translates as
// `expected` (CTranslate2's, space-separated).
size_t SameTokenTranslations(
    const Translator& translator,
    const std::vector<std::vector<std::string>>& sources, int beam,
    const nlohmann::json& expected,
    const std::vector<std::string>& target_prefix = {}) {
  const auto translations =
      translator.TranslateTokens(sources, beam, target_prefix);
  size_t same = 0;
  for (size_t i = 0; i < translations.size(); ++i) {
    same += JoinPieces(translations[i]) == expected[i].get<std::string>();
  }
  return same;
}

// Translations exactly `length` tokens long (CTranslate2's min and max
// decoding length both `length`), each text one sentence, no retries.
TranslatorOptions FixedLengths(int length) {
  TranslatorOptions options;
  options.min_decode_length = options.max_decode_length = length;
  options.length_ratio = 0;
  options.length_offset = length;
  options.max_sentence_tokens = 1000;
  options.output_guard = false;
  return options;
}

// Translations of free length up to `cap` (CTranslate2's
// max_decoding_length), no retries.
TranslatorOptions LengthsUpTo(int cap) {
  TranslatorOptions options;
  options.max_decode_length = cap;
  options.length_ratio = 0;
  options.length_offset = cap;
  options.output_guard = false;
  return options;
}

// Lengths free (up to a cap, </s> made likely): beam 4 ranks hypotheses as
// CTranslate2's translate_batch does by default (log P / length, </s>
// counted; done once 4 have ended; at least one token), not as GNMT's
// penalty would.
TEST_P(ImportedFamilyTest, RanksLengthsAsCTranslate2) {
  Checkpoint checkpoint = Load(GetParam());
  EXPECT_EQ(checkpoint.length_normalization, LengthNormalization::kCtranslate2);
  const nlohmann::json& expected = Made().expected.at(GetParam());
  const TranslatorOptions options =
      LengthsUpTo(Made().expected.at("free_length").get<int>());
  const auto sources = SplitLines(expected.at("sources"));
  const size_t sentences = sources.size();
  const size_t same =
      SameTokenTranslations(*Translator::FromCheckpoint(checkpoint, options),
                            sources, 4, expected.at("beam_free"));
  EXPECT_GE(same, 0.99 * sentences);
  checkpoint.length_normalization = LengthNormalization::kGnmt;
  const size_t same_gnmt =
      SameTokenTranslations(*Translator::FromCheckpoint(checkpoint, options),
                            sources, 4, expected.at("beam_free"));
  std::cout << GetParam() << ": " << same << " of " << sentences
            << " as CTranslate2's beam of free length; " << same_gnmt
            << " with GNMT's length penalty instead\n";
}

// With a target prefix (a multilingual model's language token), forced
// after the start token, every translation starts with it and goes on as
// CTranslate2's does: the prefix counts in the lengths and adds nothing to
// the score; at fixed lengths (greedy and beam 4) and at free ones (beam
// 4, where the first step after the prefix may end only its best beam).
TEST_P(ImportedFamilyTest, FollowsTargetPrefixesAsCTranslate2) {
  Checkpoint checkpoint = Load(GetParam());
  const nlohmann::json& expected = Made().expected.at(GetParam());
  const std::vector<std::string> prefix = {expected.at("prefix")};
  const auto sources = SplitLines(expected.at("sources"));
  const size_t sentences = sources.size();
  const int length = Made().expected.at("length").get<int>();
  const auto fixed =
      Translator::FromCheckpoint(checkpoint, FixedLengths(length));
  for (const auto& [beam, key] :
       {std::pair{1, "greedy_prefixed"}, {4, "beam_prefixed"}}) {
    EXPECT_GE(
        SameTokenTranslations(*fixed, sources, beam, expected.at(key), prefix),
        0.99 * sentences)
        << key;
  }
  const auto free = Translator::FromCheckpoint(
      checkpoint, LengthsUpTo(Made().expected.at("free_length").get<int>()));
  const size_t same = SameTokenTranslations(
      *free, sources, 4, expected.at("beam_free_prefixed"), prefix);
  EXPECT_GE(same, 0.99 * sentences);
  std::cout << GetParam() << ": " << same << " of " << sentences
            << " as CTranslate2's beam of free length after a prefix\n";
  EXPECT_THROW(fixed->TranslateTokens(sources, 1, {"no-such-piece"}),
               std::invalid_argument);
}

// Each token aligns to the source token CTranslate2's attention puts first
// (its return_attention: the model's alignment heads), and
// replace_unknowns puts that source piece in place of each <unk> as its
// translate_batch does; greedy and beam 4, on LibTorch's step and the
// packed one.
TEST_P(ImportedFamilyTest, AlignsAndReplacesUnknownsAsCTranslate2) {
  Checkpoint checkpoint = Load(GetParam());
  const nlohmann::json& expected = Made().expected.at(GetParam());
  const auto sources = SplitLines(expected.at("sources"));
  const int length = Made().expected.at("length").get<int>();
  std::vector<EncodedSource> encoded;
  for (const auto& source : sources) {
    encoded.push_back({checkpoint.source_vocabulary.Encode(source)});
    encoded.back().align = true;
  }
  const bool packs = PackedTransformer::Computes(checkpoint.model->config());
  for (const char* decoder : {"libtorch", "packed"}) {
    if (std::string(decoder) == "packed" && !packs) continue;
    SCOPED_TRACE(decoder);
    SelectDecoder(*checkpoint.model, decoder, "float32");
    const auto translator =
        Translator::FromCheckpoint(checkpoint, FixedLengths(length));
    for (const auto& [beam, key] : {std::pair{1, "greedy"}, {4, "beam"}}) {
      for (EncodedSource& source : encoded) source.beam_size = beam;
      const auto decoded =
          translator->NewContinuousDecoder()->DecodeAll(encoded);
      const nlohmann::json& alignments =
          expected.at(std::string(key) + "_alignment");
      size_t tokens = 0;
      size_t same = 0;
      for (size_t i = 0; i < decoded.size(); ++i) {
        ASSERT_EQ(decoded[i].source_positions.size(),
                  decoded[i].target_ids.size());
        // Only where the translations agree do the alignments compare.
        if (decoded[i].target_ids.size() != alignments[i].size()) continue;
        for (size_t t = 0; t < alignments[i].size(); ++t) {
          ++tokens;
          same += decoded[i].source_positions[t] == alignments[i][t].get<int>();
        }
      }
      EXPECT_GE(tokens, 0.9 * sources.size() * length) << key;
      EXPECT_GE(same, 0.99 * tokens) << key;
      const auto replaced =
          translator->TranslateTokens(sources, beam, {}, true);
      size_t same_replaced = 0;
      size_t unknowns = 0;
      for (size_t i = 0; i < replaced.size(); ++i) {
        same_replaced += JoinPieces(replaced[i]) ==
                         expected.at(std::string(key) + "_replaced")[i];
        unknowns +=
            std::count(replaced[i].begin(), replaced[i].end(),
                       checkpoint.target_vocabulary.Token(Vocabulary::kUnkId));
      }
      EXPECT_GE(same_replaced, 0.99 * sources.size()) << key;
      EXPECT_EQ(unknowns, 0u) << key;
      std::cout << GetParam() << " " << decoder << " " << key << ": " << same
                << " of " << tokens << " tokens aligned as CTranslate2's, "
                << same_replaced << " of " << sources.size()
                << " translations with unknowns replaced as its\n";
    }
  }
}

// Saved as a fanyi checkpoint (what fanyi-import writes) and loaded again,
// the model and its vocabularies are the same.
TEST_P(ImportedFamilyTest, SavedCheckpointLoadsTheSame) {
  c10::InferenceMode inference;
  Checkpoint imported = Load(GetParam());
  const std::string saved =
      testing_util::MakeTempDir("ctranslate2-saved") + "/model";
  SaveCheckpoint(imported, saved);
  EXPECT_FALSE(IsCt2ModelDirectory(saved));
  Checkpoint loaded = LoadCheckpoint(saved, torch::kCPU);
  ASSERT_EQ(loaded.target_vocabulary.size(), imported.target_vocabulary.size());
  for (int64_t id = 0; id < loaded.target_vocabulary.size(); ++id) {
    ASSERT_EQ(loaded.target_vocabulary.Token(id),
              imported.target_vocabulary.Token(id));
  }
  EXPECT_EQ(loaded.source_vocabulary.special_names(),
            Vocabulary::SpecialNames::kModel);
  EXPECT_EQ(loaded.length_normalization, LengthNormalization::kCtranslate2);
  const torch::Device cpu(torch::kCPU);
  const torch::Tensor source =
      MakeSourceTensor({{5, 6, 7, 8}, {9, 10}}, loaded.model->config(), cpu);
  const torch::Tensor target =
      PadRows({{Vocabulary::kBosId, 11, 12}}, cpu).expand({2, 3}).contiguous();
  EXPECT_TRUE(at::allclose(loaded.model->forward(source, target),
                           imported.model->forward(source, target), 0, 0));
}

// fanyi-import writes the checkpoint, and fanyi-eval --tokens translates
// pieces with it (CTranslate2's lengths fixed) as CTranslate2 did.
TEST_P(ImportedFamilyTest, CommandLineImportsAndTranslatesPieces) {
  const nlohmann::json& expected = Made().expected.at(GetParam());
  const std::string dir = testing_util::MakeTempDir("ctranslate2-cli");
  std::ofstream sources(dir + "/sources.txt");
  for (const auto& source : expected.at("sources")) {
    sources << source.get<std::string>() << "\n";
  }
  sources << "\n";  // An empty source: an empty translation.
  sources.close();
  const std::string bin = std::string(FANYI_BINARY_DIR) + "/bin/";
  const std::string length =
      std::to_string(Made().expected.at("length").get<int64_t>());
  const std::string import = bin + "fanyi-import --out '" + dir + "/model' '" +
                             Made().dir + "/" + GetParam() + "' >'" + dir +
                             "/import.log' 2>&1";
  ASSERT_EQ(std::system(import.c_str()), 0) << ReadFile(dir + "/import.log");
  const std::string eval =
      bin + "fanyi-eval --model_dir '" + dir + "/model' --tokens --input '" +
      dir + "/sources.txt' --output '" + dir +
      "/beam.txt' --beam_size 4 --compute_type float32 --threads 1 "
      "--min_decoding_length " +
      length + " --max_decoding_length " + length + " >'" + dir +
      "/eval.log' 2>&1";
  ASSERT_EQ(std::system(eval.c_str()), 0) << ReadFile(dir + "/eval.log");
  std::istringstream translations(ReadFile(dir + "/beam.txt"));
  size_t same = 0;
  std::string line;
  size_t lines = 0;
  for (; std::getline(translations, line); ++lines) {
    if (lines == expected.at("beam").size()) {
      EXPECT_EQ(line, "");
    } else {
      ASSERT_LT(lines, expected.at("beam").size());
      same += line == expected["beam"][lines].get<std::string>();
    }
  }
  EXPECT_EQ(lines, expected.at("beam").size() + 1);
  EXPECT_GE(same, 0.99 * expected.at("beam").size());
}

// A multilingual model (M2M-100's layout) imported for one of its pairs
// (fanyi-import with the pair's languages) is told the pair by its language
// tokens: "__en__" starts every source and "__zh__" every translation, and
// it translates text as CTranslate2 does when called so.
TEST(Ct2ImportTest, MultilingualModelTranslatesAPairByItsLanguageTokens) {
  const nlohmann::json& expected = Made().expected.at("m2m");
  const std::string dir = testing_util::MakeTempDir("ctranslate2-m2m");
  const std::string import = std::string(FANYI_BINARY_DIR) +
                             "/bin/fanyi-import --source_language en "
                             "--target_language zh --out '" +
                             dir + "/model' '" + Made().dir + "/m2m' >'" + dir +
                             "/import.log' 2>&1";
  ASSERT_EQ(std::system(import.c_str()), 0) << ReadFile(dir + "/import.log");
  EXPECT_NE(ReadFile(dir + "/import.log").find("__en__"), std::string::npos);
  const Checkpoint checkpoint = LoadCheckpoint(dir + "/model", torch::kCPU);
  EXPECT_EQ(checkpoint.source_prefix, std::vector<std::string>{"__en__"});
  EXPECT_EQ(checkpoint.target_prefix, std::vector<std::string>{"__zh__"});
  const auto translator = Translator::FromCheckpoint(
      checkpoint, FixedLengths(Made().expected.at("length").get<int>()));
  // Sources of plain words (a language token as text would not read as
  // one), compared without spaces: the target is Chinese, written without
  // them between most tokens.
  std::vector<std::string> texts;
  std::vector<size_t> kept;
  for (size_t i = 0; i < expected.at("sources").size(); ++i) {
    const std::string source = expected["sources"][i];
    if (source.find("__") != std::string::npos) continue;
    texts.push_back(source);
    kept.push_back(i);
  }
  ASSERT_GE(texts.size(), 20u);
  const auto unspaced = [](std::string text) {
    text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
    return text;
  };
  for (const auto& [beam, key] :
       {std::pair{1, "greedy_en_zh"}, {4, "beam_en_zh"}}) {
    const std::vector<std::string> translations =
        translator->Translate(texts, beam);
    size_t same = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      same += unspaced(translations[i]) ==
              unspaced(expected[key][kept[i]].get<std::string>());
    }
    EXPECT_GE(same, 0.99 * texts.size()) << key;
    std::cout << key << ": " << same << " of " << texts.size()
              << " texts as CTranslate2's\n";
  }
  // A language it has no token for is refused, naming it.
  const std::string unknown = std::string(FANYI_BINARY_DIR) +
                              "/bin/fanyi-import --source_language en "
                              "--target_language xx --out '" +
                              dir + "/other' '" + Made().dir + "/m2m' >'" +
                              dir + "/refused.log' 2>&1";
  EXPECT_NE(std::system(unknown.c_str()), 0);
  EXPECT_NE(ReadFile(dir + "/refused.log").find("no token for \"xx\""),
            std::string::npos)
      << ReadFile(dir + "/refused.log");
  // Its language tokens are checked at load.
  nlohmann::json config =
      nlohmann::json::parse(ReadFile(dir + "/model/config.json"));
  config["source_prefix"] = {"__xx__"};
  std::ofstream(dir + "/model/config.json") << config.dump();
  EXPECT_THROW(LoadCheckpoint(dir + "/model", torch::kCPU), std::runtime_error);
}

// A CTranslate2 directory with the SentencePiece model beside it, as users
// lay out a converted model, translates text: the Argos package's model
// and SentencePiece model as a bare directory give the package's
// translations. Half of OPUS-MT's pair, or two choices, is refused.
TEST(Ct2ImportTest, BareDirectoryTakesTheSentencePieceModelBesideIt) {
  const std::string dir =
      testing_util::MakeTempDir("ctranslate2-bare") + "/model";
  fs::copy(Made().dir + "/argos/model", dir);
  fs::copy_file(Made().dir + "/argos/sentencepiece.model",
                dir + "/sentencepiece.model");
  const int length = Made().expected.at("length").get<int>();
  const std::vector<std::string> texts =
      Made().expected.at("argos").at("texts");
  const auto bare = Translator::FromCheckpoint(LoadCheckpoint(dir, torch::kCPU),
                                               FixedLengths(length));
  Checkpoint package = LoadCheckpoint(Made().dir + "/argos", torch::kCPU);
  package.length_penalty = 1.0;  // The bare directory's.
  const auto argos = Translator::FromCheckpoint(package, FixedLengths(length));
  EXPECT_EQ(bare->Translate(texts, 4), argos->Translate(texts, 4));
  fs::copy_file(dir + "/sentencepiece.model", dir + "/source.spm");
  EXPECT_THROW(LoadCheckpoint(dir, torch::kCPU), std::runtime_error);
  fs::copy_file(dir + "/sentencepiece.model", dir + "/target.spm");
  EXPECT_THROW(LoadCheckpoint(dir, torch::kCPU), std::runtime_error);
  fs::remove(dir + "/sentencepiece.model");
  EXPECT_EQ(bare->Translate(texts, 1),
            Translator::FromCheckpoint(LoadCheckpoint(dir, torch::kCPU),
                                       FixedLengths(length))
                ->Translate(texts, 1));
}

INSTANTIATE_TEST_SUITE_P(Families, ImportedFamilyTest,
                         ::testing::Values("opennmt", "marian", "m2m"));

// fanyi's four specials take the model's own unk and eos rows, and its
// start token's when it is a token of its own; the rows fanyi adds get
// names no token has; CTranslate2's tokens follow in their order.
TEST(Ct2ImportTest, SpecialsTakeTheModelsOwnRows) {
  const Checkpoint opennmt = Load("opennmt");
  const Checkpoint marian = Load("marian");
  const Checkpoint m2m = Load("m2m");
  auto first = [](const Vocabulary& vocabulary, int64_t count) {
    std::vector<std::string> tokens;
    for (int64_t id = 0; id < count; ++id) {
      tokens.push_back(vocabulary.Token(id));
    }
    return tokens;
  };
  using Tokens = std::vector<std::string>;
  EXPECT_EQ(first(opennmt.target_vocabulary, 6),
            (Tokens{"<fanyi pad>", "<unk>", "<s>", "</s>", "<blank>", "p0"}));
  EXPECT_EQ(first(marian.source_vocabulary, 5),
            (Tokens{"<fanyi pad>", "<unk>", "<fanyi start>", "</s>", "s0"}));
  EXPECT_EQ(first(marian.target_vocabulary, 5),
            (Tokens{"<fanyi pad>", "<unk>", "<fanyi start>", "</s>", "t0"}));
  EXPECT_EQ(first(m2m.target_vocabulary, 7),
            (Tokens{"<fanyi pad>", "<unk>", "<fanyi start>", "</s>", "<s>",
                    "<pad>", "w0"}));
  // No line of pieces reaches an added row: the model's own "<pad>" is its
  // token, and a name with a space is two pieces.
  EXPECT_EQ(m2m.source_vocabulary.Id("<pad>"), 5);
  EXPECT_EQ(opennmt.source_vocabulary.Id("<pad>"), Vocabulary::kUnkId);
  EXPECT_EQ(opennmt.source_case, WordCase::kKeep);
  EXPECT_FALSE(opennmt.model->config().source_eos);
  EXPECT_TRUE(marian.model->config().source_eos);
  EXPECT_TRUE(m2m.model->config().share_embeddings);
  EXPECT_FALSE(marian.model->config().pre_norm);
}

// A source may fill the position table when no </s> follows it
// (OpenNMT-py's sources), and one token less when one does (Marian's).
TEST(Ct2ImportTest, SourcesFillThePositionTable) {
  for (const char* family : {"opennmt", "marian"}) {
    SCOPED_TRACE(family);
    const Checkpoint checkpoint = Load(family);
    const ModelConfig& config = checkpoint.model->config();
    EXPECT_EQ(config.MaxSourceTokens(),
              config.max_positions - (config.source_eos ? 1 : 0));
    TranslatorOptions options;
    options.max_decode_length = 3;
    options.cpu_decoder = "libtorch";
    options.compute_type = "float32";
    const auto translator = Translator::FromCheckpoint(checkpoint, options);
    const std::string piece = checkpoint.source_vocabulary.Token(9);
    std::vector<std::string> longest(config.MaxSourceTokens(), piece);
    EXPECT_EQ(translator->TranslateTokens({longest}, 1).size(), 1u);
    longest.push_back(piece);
    EXPECT_THROW(translator->TranslateTokens({longest}, 1),
                 std::invalid_argument);
  }
}

// A copy of `family`'s directory with config.json's `key` set to `value`.
std::string WithConfig(const std::string& family, const std::string& key,
                       const nlohmann::json& value) {
  const std::string dir = testing_util::MakeTempDir("ctranslate2-edited");
  fs::copy(Made().dir + "/" + family, dir,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  nlohmann::json config = nlohmann::json::parse(ReadFile(dir + "/config.json"));
  config[key] = value;
  std::ofstream(dir + "/config.json") << config.dump();
  return dir;
}

// A copy of `family`'s directory whose shared vocabulary has `token` at
// entry 10.
std::string WithToken(const std::string& family, const std::string& token) {
  const std::string dir = testing_util::MakeTempDir("ctranslate2-edited");
  fs::copy(Made().dir + "/" + family, dir,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  nlohmann::json tokens =
      nlohmann::json::parse(ReadFile(dir + "/shared_vocabulary.json"));
  tokens[10] = token;
  std::ofstream(dir + "/shared_vocabulary.json") << tokens.dump();
  return dir;
}

// Inline tags and template tokens through a package, whose model never
// learned fanyi's placeholders: each comes back exactly once, put where
// the model's attention places it, and the words around it are the
// model's own translation of the sentence without it (an inline element's
// words are a text of their own).
TEST(Ct2ImportTest, ArgosPackagePlacesTagsAndTokensByAttention) {
  const nlohmann::json& expected = Made().expected.at("argos");
  const int length = Made().expected.at("length").get<int>();
  const auto translator = Translator::FromCheckpoint(
      LoadCheckpoint(Made().dir + "/argos", torch::kCPU), FixedLengths(length));
  // Corpus sentences of three words or more, with an element around, and
  // a token after, their second word.
  std::vector<std::string> html;
  std::vector<std::string> templated;
  std::vector<std::string> sentences;
  std::vector<std::string> without;
  for (const auto& each : expected.at("texts")) {
    const std::vector<std::string> words = Split(each.get<std::string>());
    if (words.size() < 3 || html.size() == 20) continue;
    std::string with_tag;
    std::string with_token;
    std::string rest;
    for (size_t w = 0; w < words.size(); ++w) {
      const std::string space = w == 0 ? "" : " ";
      with_tag += space + (w == 1 ? "<b>" + words[w] + "</b>" : words[w]);
      with_token += space + words[w] + (w == 1 ? " {name}" : "");
      if (w != 1) rest += (rest.empty() ? "" : " ") + words[w];
    }
    html.push_back("<p>" + with_tag + "</p>");
    templated.push_back(with_token);
    sentences.push_back(each);
    without.push_back(rest);
  }
  ASSERT_GE(html.size(), 10u);
  TextOptions as_html;
  as_html.format = TextFormat::kHtml;
  const auto tagged = translator->TranslateTexts(html, as_html);
  const auto tokens = translator->TranslateTexts(templated, TextOptions());
  const std::vector<std::string> plain = translator->Translate(without);
  const std::vector<std::string> whole = translator->Translate(sentences);
  // `text` with runs of spaces made one, trimmed, and HTML's escapes read.
  const auto words_of = [](std::string text) {
    for (const auto& [escaped, character] :
         {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
      for (size_t at; (at = text.find(escaped)) != std::string::npos;) {
        text.replace(at, std::string(escaped).size(), character);
      }
    }
    std::string words;
    for (const std::string& word : Split(text)) {
      words += (words.empty() ? "" : " ") + word;
    }
    return words;
  };
  size_t tags_inside = 0;
  size_t tokens_inside = 0;
  for (size_t i = 0; i < html.size(); ++i) {
    SCOPED_TRACE(html[i]);
    const std::string& out = tagged[i].text;
    const size_t open = out.find("<b>");
    const size_t close = out.find("</b>");
    ASSERT_NE(open, std::string::npos) << out;
    ASSERT_NE(close, std::string::npos) << out;
    EXPECT_EQ(out.find("<b>", open + 1), std::string::npos) << out;
    ASSERT_EQ(out.rfind("<p>", 0), 0u) << out;
    ASSERT_EQ(out.size() - out.rfind("</p>"), 4u) << out;
    const std::string outside =
        out.substr(3, open - 3) + out.substr(close + 4, out.size() - close - 8);
    EXPECT_EQ(words_of(outside), words_of(plain[i])) << out;
    tags_inside +=
        !words_of(out.substr(close + 4, out.size() - close - 8)).empty();
    const std::string& token = tokens[i].text;
    const size_t at = token.find("{name}");
    ASSERT_NE(at, std::string::npos) << token;
    EXPECT_EQ(token.find("{name}", at + 1), std::string::npos) << token;
    EXPECT_EQ(words_of(token.substr(0, at) + " " + token.substr(at + 6)),
              words_of(whole[i]))
        << token;
    tokens_inside += at + 6 < token.size();
  }
  // Random weights attend everywhere, so most land inside their sentence:
  // none would if alignments were not read.
  EXPECT_GT(tags_inside, 0u);
  EXPECT_GT(tokens_inside, 0u);
  // Alternatives place them by their own alignments: each once.
  TextOptions alternatives = as_html;
  alternatives.beam_size = 4;
  alternatives.alternatives = 3;
  size_t alternative_count = 0;
  for (const std::string& text : html) {
    const PreparedText prepared =
        translator->pipeline().PrepareText(text, alternatives);
    const auto decoded =
        translator->NewContinuousDecoder()->DecodeAll(prepared.parts);
    const TextAssembler& assembler = translator->pipeline().assembler();
    for (const std::string& other : assembler.AssembleAlternatives(
             prepared, decoded, assembler.Assemble(prepared, decoded).text)) {
      ++alternative_count;
      const size_t open = other.find("<b>");
      ASSERT_NE(open, std::string::npos) << other;
      EXPECT_EQ(other.find("<b>", open + 1), std::string::npos) << other;
      EXPECT_NE(other.find("</b>"), std::string::npos) << other;
    }
  }
  EXPECT_GT(alternative_count, 0u);
  // More placeholders than a clause holds tokens: the clauses of
  // placeholders alone join the words before them (none is decoded from
  // an empty source), and every one comes back.
  TranslatorOptions short_clauses = FixedLengths(length);
  short_clauses.max_sentence_tokens = 8;
  const auto clauses = Translator::FromCheckpoint(
      LoadCheckpoint(Made().dir + "/argos", torch::kCPU), short_clauses);
  std::string many = "Tom";
  for (int i = 0; i < 300; ++i) many += " %s";
  many += " left the house.";
  const PreparedText prepared =
      clauses->pipeline().PrepareText(many, TextOptions());
  ASSERT_GE(prepared.parts.size(), 1u);
  for (const EncodedSource& part : prepared.parts) {
    EXPECT_FALSE(part.ids.empty());
  }
  const std::string out = clauses->Translate({many}).at(0);
  size_t tokens_back = 0;
  for (size_t at = out.find("%s"); at != std::string::npos;
       at = out.find("%s", at + 2)) {
    ++tokens_back;
  }
  EXPECT_EQ(tokens_back, 300u) << out;
  std::cout << tags_inside << " of " << html.size() << " tags and "
            << tokens_inside << " of " << html.size()
            << " {name} tokens placed inside their sentence by attention\n";
}

// What fanyi's Transformer cannot compute is refused at load, naming the
// file and the option.
// An Argos Translate package, as a folder and as an .argosmodel file: its
// SentencePiece model (spm_train's defaults, nmt_nfkc) cuts each text into
// the pieces the sentencepiece package gives, the model translates them as
// CTranslate2 does, and the Translator's text, pipeline and all, is those
// pieces decoded by sentencepiece.
TEST(Ct2ImportTest, ArgosPackageTranslatesAsCTranslate2AndSentencePiece) {
  const nlohmann::json& expected = Made().expected.at("argos");
  const int64_t length = Made().expected.at("length").get<int64_t>();
  for (const std::string& path :
       {Made().dir + "/argos",
        Made().dir + "/translate-en_de-1_0.argosmodel"}) {
    SCOPED_TRACE(path);
    ASSERT_TRUE(IsArgosPackage(path));
    Checkpoint checkpoint = LoadCheckpoint(path, torch::kCPU);
    EXPECT_EQ(checkpoint.source_language, "en");
    EXPECT_EQ(checkpoint.target_language, "de");
    ASSERT_NE(checkpoint.source_subwords, nullptr);
    EXPECT_TRUE(checkpoint.source_subwords->normalizes());
    const auto translator = Translator::FromCheckpoint(
        checkpoint, FixedLengths(static_cast<int>(length)));
    std::vector<std::vector<std::string>> sources;
    for (size_t i = 0; i < expected.at("texts").size(); ++i) {
      const std::string text = expected["texts"][i];
      sources.push_back(checkpoint.source_subwords->Encode(text));
      EXPECT_EQ(JoinPieces(sources.back()),
                expected["pieces"][i].get<std::string>())
          << text;
    }
    for (const auto& [beam, key] : {std::pair{1, "greedy"}, {4, "beam"}}) {
      EXPECT_EQ(
          SameTokenTranslations(*translator, sources, beam, expected[key]),
          sources.size())
          << key;
      const std::vector<std::string> texts = translator->Translate(
          expected["texts"].get<std::vector<std::string>>(), beam);
      size_t same = 0;
      for (size_t i = 0; i < texts.size(); ++i) {
        const std::string theirs = expected[std::string(key) + "_text"][i];
        EXPECT_EQ(texts[i], theirs) << expected["texts"][i];
        same += texts[i] == theirs;
      }
      std::cout << path << " " << key << ": " << same << " of " << texts.size()
                << " texts as CTranslate2 and sentencepiece\n";
    }
  }
  // As argos-translate asks: beam 4, length_penalty 0.2 (the package's
  // default here), lengths free up to the cap.
  {
    const Checkpoint checkpoint =
        LoadCheckpoint(Made().dir + "/argos", torch::kCPU);
    EXPECT_DOUBLE_EQ(checkpoint.length_penalty, 0.2);
    const TranslatorOptions options =
        LengthsUpTo(Made().expected.at("free_length").get<int>());
    EXPECT_EQ(
        SameTokenTranslations(*Translator::FromCheckpoint(checkpoint, options),
                              SplitLines(expected.at("pieces")), 4,
                              expected.at("beam_free")),
        expected.at("pieces").size());
  }
  // fanyi-import writes it as a fanyi checkpoint, its SentencePiece model
  // (and so its normalization) kept.
  const std::string dir = testing_util::MakeTempDir("argos-import");
  const std::string import =
      std::string(FANYI_BINARY_DIR) + "/bin/fanyi-import --out '" + dir +
      "/model' '" + Made().dir + "/translate-en_de-1_0.argosmodel' >'" + dir +
      "/import.log' 2>&1";
  ASSERT_EQ(std::system(import.c_str()), 0) << ReadFile(dir + "/import.log");
  Checkpoint imported = LoadCheckpoint(dir + "/model", torch::kCPU);
  EXPECT_EQ(imported.model_version, "translate-en_de-1_0");
  // fanyi-train --init_from fine-tunes it in its own pieces: the run keeps
  // its vocabularies and SentencePiece model.
  const std::string train =
      std::string(FANYI_BINARY_DIR) + "/bin/fanyi-train --init_from '" + dir +
      "/model' --train '" +
      testing_util::SharedDataPath("en-zh/train_mini.tsv") + "' --dev '" +
      testing_util::SharedDataPath("en-zh/dev_mini.tsv") + "' --out '" + dir +
      "/tuned' --max_steps 3 --ranks 1 --threads 1 --length_penalties 1 >'" +
      dir + "/train.log' 2>&1";
  ASSERT_EQ(std::system(train.c_str()), 0) << ReadFile(dir + "/train.log");
  const Checkpoint tuned = LoadCheckpoint(dir + "/tuned", torch::kCPU);
  ASSERT_EQ(tuned.target_vocabulary.size(), imported.target_vocabulary.size());
  for (int64_t id = 0; id < tuned.target_vocabulary.size(); ++id) {
    ASSERT_EQ(tuned.target_vocabulary.Token(id),
              imported.target_vocabulary.Token(id));
  }
  ASSERT_NE(tuned.source_subwords, nullptr);
  EXPECT_EQ(tuned.source_subwords->serialized(),
            imported.source_subwords->serialized());
  EXPECT_EQ(imported.target_language, "de");
  ASSERT_NE(imported.source_subwords, nullptr);
  EXPECT_TRUE(imported.source_subwords->normalizes());
  EXPECT_EQ(Translator::FromCheckpoint(imported,
                                       FixedLengths(static_cast<int>(length)))
                ->Translate(expected["texts"].get<std::vector<std::string>>()),
            expected["greedy_text"].get<std::vector<std::string>>());
}

// A multilingual package's target_prefix (its target language's token) is
// forced at the start of every translation and left out of the text, as
// argos-translate does with CTranslate2's target_prefix; it is kept through
// a saved checkpoint.
TEST(Ct2ImportTest, ArgosTargetPrefixStartsEveryTranslation) {
  const nlohmann::json& expected = Made().expected.at("argos");
  const std::string package = testing_util::MakeTempDir("argos-prefixed");
  fs::copy(Made().dir + "/argos", package, fs::copy_options::recursive);
  nlohmann::json metadata =
      nlohmann::json::parse(ReadFile(package + "/metadata.json"));
  metadata["target_prefix"] = expected.at("prefix");
  std::ofstream(package + "/metadata.json") << metadata.dump();
  const Checkpoint imported = LoadCheckpoint(package, torch::kCPU);
  ASSERT_EQ(imported.target_prefix,
            std::vector<std::string>{expected.at("prefix")});
  const std::string saved = testing_util::MakeTempDir("argos-prefixed-saved");
  SaveCheckpoint(imported, saved + "/model");
  const Checkpoint reloaded = LoadCheckpoint(saved + "/model", torch::kCPU);
  EXPECT_EQ(reloaded.target_prefix, imported.target_prefix);
  // A config.json whose prefix the vocabulary lacks is refused, named.
  const std::string edited = testing_util::MakeTempDir("argos-prefix-edited");
  fs::copy(saved + "/model", edited, fs::copy_options::recursive);
  nlohmann::json config =
      nlohmann::json::parse(ReadFile(edited + "/config.json"));
  config["target_prefix"] = {"__xx__"};
  std::ofstream(edited + "/config.json") << config.dump();
  try {
    LoadCheckpoint(edited, torch::kCPU);
    ADD_FAILURE() << "a prefix outside the vocabulary loaded";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("config.json: target_prefix \"__xx__\" is not an "
                        "ordinary token of tgt_vocab.json"),
              std::string::npos)
        << error.what();
  }
  // Nor may a prefix be one of the specials (an end of sentence, say).
  config["target_prefix"] = {"</s>"};
  std::ofstream(edited + "/config.json") << config.dump();
  EXPECT_THROW(LoadCheckpoint(edited, torch::kCPU), std::runtime_error);
  const int length = Made().expected.at("length").get<int>();
  const auto texts = expected.at("texts").get<std::vector<std::string>>();
  const auto wanted =
      expected.at("greedy_prefixed_text").get<std::vector<std::string>>();
  for (const Checkpoint* checkpoint : {&imported, &reloaded}) {
    const std::vector<std::string> translated =
        Translator::FromCheckpoint(*checkpoint, FixedLengths(length))
            ->Translate(texts);
    size_t same = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      same += translated[i] == wanted[i];
    }
    EXPECT_GE(same, 0.99 * texts.size());
  }
}

// Packages fanyi cannot serve, or that are broken or hostile, are refused
// with an error that names the package's file; an .argosmodel leaves no
// unpacked copy behind.
TEST(Ct2ImportTest, RefusesBadArgosPackages) {
  const auto copy = [](const std::string& what) {
    const std::string dir = testing_util::MakeTempDir("argos-" + what);
    fs::copy(
        Made().dir + "/argos", dir,
        fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    return dir;
  };
  const auto refused = [](const std::string& path) -> std::string {
    try {
      LoadCheckpoint(path, torch::kCPU);
    } catch (const std::runtime_error& error) {
      return error.what();
    }
    ADD_FAILURE() << path << " loaded";
    return "";
  };
  const std::string bpe = copy("bpe");
  fs::rename(bpe + "/sentencepiece.model", bpe + "/bpe.model");
  EXPECT_NE(refused(bpe).find("Moses and subword-nmt"), std::string::npos);

  const std::string prefixed = copy("prefix");
  nlohmann::json metadata =
      nlohmann::json::parse(ReadFile(prefixed + "/metadata.json"));
  metadata["target_prefix"] = "__de__";
  std::ofstream(prefixed + "/metadata.json") << metadata.dump();
  EXPECT_NE(refused(prefixed).find(
                "metadata.json: target_prefix \"__de__\" is not in the "
                "model's vocabulary"),
            std::string::npos);

  const std::string no_json = copy("json");
  std::ofstream(no_json + "/metadata.json") << "{\"from_code\": ";
  EXPECT_NE(refused(no_json).find(no_json + "/metadata.json is not JSON"),
            std::string::npos);

  const std::string bad_model = copy("spm");
  std::ofstream(bad_model + "/sentencepiece.model") << "not a model";
  EXPECT_NE(refused(bad_model).find(bad_model + "/sentencepiece.model: "),
            std::string::npos);

  // Zips: not one; an entry outside the package's folder; a truncated
  // model.bin, named inside the file.
  const std::string dir = testing_util::MakeTempDir("argos-zips");
  std::ofstream(dir + "/plain.argosmodel") << "not a zip";
  EXPECT_NE(refused(dir + "/plain.argosmodel").find("is not an .argosmodel"),
            std::string::npos);
  const std::string script =
      "import sys, zipfile\n"
      "src, dst, name, cut = sys.argv[1:5]\n"
      "with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, 'w') as b:\n"
      "    for info in a.infolist():\n"
      "        data = a.read(info)\n"
      "        if info.filename.endswith(name):\n"
      "            data = data[:int(cut)]\n"
      "            info.filename = "
      "info.filename.replace('translate-en_de-1_0/',"
      " sys.argv[5])\n"
      "        b.writestr(info.filename, data)\n";
  std::ofstream(dir + "/edit.py") << script;
  const auto edited = [&](const std::string& out, const std::string& name,
                          int cut, const std::string& folder) {
    const std::string command = "python3 '" + dir + "/edit.py' '" + Made().dir +
                                "/translate-en_de-1_0.argosmodel' '" + out +
                                "' '" + name + "' " + std::to_string(cut) +
                                " '" + folder + "'";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return out;
  };
  const std::string escaping = edited(dir + "/escape.argosmodel",
                                      "metadata.json", 1 << 20, "../escape/");
  EXPECT_NE(refused(escaping).find("is not inside the package's one folder"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir + "/escape"));
  const std::string truncated = edited(
      dir + "/truncated.argosmodel", "model.bin", 1000, "translate-en_de-1_0/");
  const std::string message = refused(truncated);
  EXPECT_NE(message.find(truncated + "!/model/model.bin"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("fanyi-argos-"), std::string::npos) << message;
  size_t left = 0;
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path())) {
    left += entry.path().filename().string().rfind("fanyi-argos-", 0) == 0;
  }
  EXPECT_EQ(left, 0u);
}

TEST(Ct2ImportTest, RefusesWhatItCannotCompute) {
  for (const auto& [key, value, message] :
       {std::tuple{"add_source_bos", nlohmann::json(true), "add_source_bos"},
        std::tuple{"decoder_start_token", nlohmann::json(nullptr),
                   "decoder_start_token is null"},
        std::tuple{"unk_token", nlohmann::json("</s>"),
                   "is named for two special tokens"},
        std::tuple{"token", nlohmann::json("p 9"), "entry 10 holds a space"},
        std::tuple{"token", nlohmann::json("p\n9"),
                   "entry 10 holds a space or a control character"},
        std::tuple{"token", nlohmann::json("p0"), "entry 10 repeats \"p0\""},
        std::tuple{"token", nlohmann::json(""), "entry 10 is an empty"}}) {
    SCOPED_TRACE(key);
    const std::string dir = std::string(key) == "token"
                                ? WithToken("opennmt", value.get<std::string>())
                                : WithConfig("opennmt", key, value);
    try {
      LoadCheckpoint(dir, torch::kCPU);
      ADD_FAILURE() << "loaded";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos)
          << error.what();
      EXPECT_NE(std::string(error.what()).find(dir), std::string::npos)
          << error.what();
    }
  }
}

}  // namespace
}  // namespace fanyi
