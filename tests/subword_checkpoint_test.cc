// Checkpoints with SentencePiece models: trained by the real trainer, saved
// and loaded back, served by the real fanyi-server over gRPC; and word-level
// checkpoints of the previous format still loading.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/model/checkpoint.h"
#include "common/pipeline/translator.h"
#include "common/text/script_converter.h"
#include "common/text/tokenizer.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "tests/server_process.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"
#include "trainer/trainer.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

constexpr int kPairs = 30;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The first kPairs pairs of the mini corpus, as (source, target).
std::vector<std::pair<std::string, std::string>> Pairs() {
  std::ifstream corpus(testing_util::SharedDataPath("en-zh/train_mini.tsv"));
  std::vector<std::pair<std::string, std::string>> pairs;
  std::string line;
  while (pairs.size() < kPairs && std::getline(corpus, line)) {
    const size_t tab = line.find('\t');
    pairs.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  return pairs;
}

// A tiny model with subword vocabularies on both sides, trained on Pairs()
// until it fits them; its checkpoint directory.
std::string TrainSubwordModelCheckpoint(const std::string& dir) {
  const fs::path data = fs::path(dir) / "pairs.tsv";
  std::ofstream out(data);
  for (const auto& [source, target] : Pairs()) {
    out << source << '\t' << target << '\n';
  }
  out.close();
  return testing_util::TrainTinyModelOn(data.string(), dir + "/run",
                                        [](TrainingOptions& options) {
                                          options.corpus.source_subwords = 120;
                                          // Fewer: the pieces 30 sentences
                                          // have.
                                          options.corpus.target_subwords = 400;
                                        });
}

TEST(SubwordCheckpointTest, RoundTripsAndIsServedByTheRealServer) {
  const std::string dir = testing_util::MakeTempDir("subword_checkpoint");
  const std::string model_dir = TrainSubwordModelCheckpoint(dir);
  const Checkpoint checkpoint = LoadCheckpoint(model_dir, torch::kCPU);
  ASSERT_NE(checkpoint.source_subwords, nullptr);
  ASSERT_NE(checkpoint.target_subwords, nullptr);
  EXPECT_EQ(checkpoint.source_subwords->serialized(),
            ReadFile(fs::path(model_dir) / "src_subwords.model"));
  EXPECT_EQ(checkpoint.target_subwords->serialized(),
            ReadFile(fs::path(model_dir) / "tgt_subwords.model"));
  // The vocabularies hold the pieces of the training text ("▁" marks a
  // word's first piece).
  const std::vector<std::string> pieces =
      Tokenizer("en", checkpoint.source_subwords).Tokenize(Pairs()[0].first);
  ASSERT_FALSE(pieces.empty());
  EXPECT_EQ(pieces.front().rfind("▁", 0), 0u) << pieces.front();
  for (const std::string& piece : pieces) {
    EXPECT_NE(checkpoint.source_vocabulary.Id(piece), Vocabulary::kUnkId)
        << piece;
  }

  // Saved and loaded again: the same models.
  const std::string copy = dir + "/copy";
  SaveCheckpoint(checkpoint, copy);
  const Checkpoint reloaded = LoadCheckpoint(copy, torch::kCPU);
  ASSERT_NE(reloaded.source_subwords, nullptr);
  EXPECT_EQ(reloaded.source_subwords->serialized(),
            checkpoint.source_subwords->serialized());
  EXPECT_EQ(reloaded.target_subwords->serialized(),
            checkpoint.target_subwords->serialized());

  // A damaged or missing model file is an error naming it.
  const std::string damaged = dir + "/damaged";
  fs::copy(copy, damaged);
  std::ofstream(fs::path(damaged) / "tgt_subwords.model") << "garbage";
  try {
    LoadCheckpoint(damaged, torch::kCPU);
    ADD_FAILURE() << "a damaged subword model loaded";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("tgt_subwords.model"),
              std::string::npos)
        << error.what();
  }
  fs::remove(fs::path(damaged) / "src_subwords.model");
  try {
    LoadCheckpoint(damaged, torch::kCPU);
    ADD_FAILURE() << "a missing subword model loaded";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("src_subwords.model"),
              std::string::npos)
        << error.what();
  }

  // Served: the model fits its training pairs, so most come back exactly.
  testing_util::ServerProcess server({"--model_dir=" + copy, "--beam_size=1"});
  const ScriptConverter to_simplified(ChineseScript::kSimplified);
  int exact = 0;
  for (const auto& [source, target] : Pairs()) {
    v1::TranslateResponse response;
    const grpc::Status status =
        testing_util::TranslateAt(server.address(), source, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    exact += response.translation().text() == to_simplified.Convert(target);
  }
  std::cout << exact << " of " << kPairs
            << " training sources translated to their reference\n";
  EXPECT_GE(exact, kPairs / 2);
}

// A word-level checkpoint of format 1 (before subword models) loads and
// translates as the same checkpoint in the current format does.
TEST(SubwordCheckpointTest, FormatOneWordCheckpointStillLoads) {
  const std::string dir = testing_util::MakeTempDir("format_one");
  const std::string current = testing_util::TrainTinyModel(
      testing_util::MakeTempDir("format_one_model"));
  const std::string old = dir + "/old";
  fs::copy(current, old);
  const fs::path config_path = fs::path(old) / "config.json";
  nlohmann::json config = nlohmann::json::parse(ReadFile(config_path));
  EXPECT_EQ(config.at("format_version"), kCheckpointFormatVersion);
  config["format_version"] = 1;
  std::ofstream(config_path) << config.dump(2);

  const Checkpoint checkpoint = LoadCheckpoint(old, torch::kCPU);
  EXPECT_EQ(checkpoint.source_subwords, nullptr);
  EXPECT_EQ(checkpoint.target_subwords, nullptr);
  TranslatorOptions options;
  options.device = "cpu";
  std::vector<std::string> sources;
  for (const auto& [source, target] : Pairs()) sources.push_back(source);
  const std::vector<std::string> from_old =
      Translator::Load(old, options)->Translate(sources);
  EXPECT_EQ(from_old, Translator::Load(current, options)->Translate(sources));
  EXPECT_FALSE(from_old.front().empty());
}

}  // namespace
}  // namespace fanyi
