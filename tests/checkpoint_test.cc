#include "common/model/checkpoint.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/randint.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/model/checkpoint_averaging.h"
#include "common/pipeline/translator.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

Checkpoint MakeCheckpoint() {
  Checkpoint checkpoint;
  checkpoint.model_version = "test-1";
  checkpoint.source_language = "en";
  checkpoint.target_language = "zh";
  checkpoint.source_vocabulary =
      Vocabulary::Build({{"a", "b", "c", "d", "e", "f"}}, 1, 0);
  checkpoint.target_vocabulary =
      Vocabulary::Build({{"一", "二", "三", "四", "五"}}, 1, 0);
  ModelConfig config;
  config.source_vocab_size = checkpoint.source_vocabulary.size();
  config.target_vocab_size = checkpoint.target_vocabulary.size();
  config.encoder_layers = 1;
  config.decoder_layers = 2;
  config.d_model = 16;
  config.d_ff = 24;
  config.heads = 2;
  config.max_positions = 32;
  torch::manual_seed(5);
  checkpoint.model = Transformer(config);
  checkpoint.model->eval();
  checkpoint.training = {{"step", 42}};
  return checkpoint;
}

std::string ErrorOf(const std::string& directory) {
  try {
    LoadCheckpoint(directory, torch::kCPU);
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

void Overwrite(const fs::path& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        (fs::path(testing_util::MakeTempDir("checkpoint_test")) / "ckpt")
            .string();
    SaveCheckpoint(original_, directory_);
  }
  Checkpoint original_ = MakeCheckpoint();
  std::string directory_;
};

TEST_F(CheckpointTest, RoundTripGivesIdenticalLogits) {
  Checkpoint loaded = LoadCheckpoint(directory_, torch::kCPU);
  EXPECT_EQ(loaded.model_version, "test-1");
  EXPECT_EQ(loaded.target_language, "zh");
  EXPECT_EQ(loaded.training["step"], 42);
  EXPECT_EQ(loaded.source_vocabulary.size(),
            original_.source_vocabulary.size());
  torch::Tensor source = at::randint(4, 10, {2, 5});
  torch::Tensor target = at::randint(4, 9, {2, 4});
  EXPECT_TRUE(torch::equal(original_.model->forward(source, target),
                           loaded.model->forward(source, target)));
  for (const char* file :
       {"model.pt", "config.json", "src_vocab.json", "tgt_vocab.json"}) {
    EXPECT_TRUE(fs::exists(fs::path(directory_) / file)) << file;
  }
  EXPECT_FALSE(fs::exists(directory_ + ".tmp"));
}

// The layer variants of models from elsewhere round-trip, in both the
// config and the weights they add or leave out.
TEST_F(CheckpointTest, LayerVariantsRoundTrip) {
  for (bool shared : {false, true}) {
    Checkpoint variant = MakeCheckpoint();
    if (shared) {
      variant.target_vocabulary =
          Vocabulary::Build({{"一", "二", "三", "四", "五", "六"}}, 1, 0);
    }
    ModelConfig config = variant.model->config();
    config.target_vocab_size = variant.target_vocabulary.size();
    config.pre_norm = false;
    config.activation = shared ? Activation::kSwish : Activation::kGeluTanh;
    config.scale_embeddings = false;
    config.final_norms = false;
    config.embedding_norms = true;
    config.share_embeddings = shared;
    config.generator_bias = true;
    torch::manual_seed(9);
    variant.model = Transformer(config);
    variant.model->eval();
    const std::string directory = directory_ + (shared ? "-shared" : "-own");
    SaveCheckpoint(variant, directory);
    Checkpoint loaded = LoadCheckpoint(directory, torch::kCPU);
    EXPECT_EQ(ModelConfigToJson(loaded.model->config()),
              ModelConfigToJson(config));
    torch::Tensor source = at::randint(4, 10, {2, 5});
    torch::Tensor target = at::randint(4, 9, {2, 4});
    EXPECT_TRUE(torch::equal(variant.model->forward(source, target),
                             loaded.model->forward(source, target)));
  }
  // A config written before the variants reads as fanyi's own layers.
  const nlohmann::json own = ModelConfigToJson(original_.model->config());
  nlohmann::json old = own;
  for (const char* field :
       {"pre_norm", "activation", "scale_embeddings", "final_norms",
        "embedding_norms", "share_embeddings", "generator_bias",
        "source_eos"}) {
    old.erase(field);
  }
  EXPECT_EQ(ModelConfigToJson(ModelConfigFromJson(old)), own);
  old["activation"] = "tanh";
  EXPECT_THROW(ModelConfigFromJson(old), std::invalid_argument);
  old["activation"] = "gelu";
  old["share_embeddings"] = true;  // With vocabularies of two sizes.
  EXPECT_THROW(ModelConfigFromJson(old), std::invalid_argument);
}

TEST_F(CheckpointTest, LetterCasesRoundTripAndDefaultToLowerWhenAbsent) {
  Checkpoint cased = MakeCheckpoint();
  cased.target_case = WordCase::kKeep;
  SaveCheckpoint(cased, directory_);
  Checkpoint loaded = LoadCheckpoint(directory_, torch::kCPU);
  EXPECT_EQ(loaded.source_case, WordCase::kLower);
  EXPECT_EQ(loaded.target_case, WordCase::kKeep);

  // A checkpoint from before the fields lowercased both sides.
  const fs::path config_path = fs::path(directory_) / "config.json";
  nlohmann::json config = nlohmann::json::parse(std::ifstream(config_path));
  config.erase("source_case");
  config.erase("target_case");
  Overwrite(config_path, config.dump());
  loaded = LoadCheckpoint(directory_, torch::kCPU);
  EXPECT_EQ(loaded.source_case, WordCase::kLower);
  EXPECT_EQ(loaded.target_case, WordCase::kLower);
}

TEST_F(CheckpointTest, SourceScriptRoundTripsAndIsEmptyWhenAbsent) {
  Checkpoint normalized = MakeCheckpoint();
  normalized.source_script = "simplified";
  SaveCheckpoint(normalized, directory_);
  EXPECT_EQ(LoadCheckpoint(directory_, torch::kCPU).source_script,
            "simplified");

  // A checkpoint from before the field kept a Chinese source as it was.
  const fs::path config_path = fs::path(directory_) / "config.json";
  nlohmann::json config = nlohmann::json::parse(std::ifstream(config_path));
  config.erase("source_script");
  Overwrite(config_path, config.dump());
  EXPECT_EQ(LoadCheckpoint(directory_, torch::kCPU).source_script, "");
}

TEST_F(CheckpointTest, LengthPenaltyRoundTripsAndTranslatorsDecodeWithIt) {
  Checkpoint tuned = MakeCheckpoint();
  tuned.length_penalty = 1.7;
  SaveCheckpoint(tuned, directory_);
  const Checkpoint loaded = LoadCheckpoint(directory_, torch::kCPU);
  EXPECT_EQ(loaded.length_penalty, 1.7);
  EXPECT_EQ(Translator::FromCheckpoint(loaded, {})->length_penalty(), 1.7);
  TranslatorOptions overridden;
  overridden.length_penalty = 0.5;
  EXPECT_EQ(Translator::FromCheckpoint(loaded, overridden)->length_penalty(),
            0.5);

  // Checkpoints from before the field decoded with 1.0.
  const fs::path config_path = fs::path(directory_) / "config.json";
  nlohmann::json config = nlohmann::json::parse(std::ifstream(config_path));
  config.erase("length_penalty");
  Overwrite(config_path, config.dump());
  EXPECT_EQ(LoadCheckpoint(directory_, torch::kCPU).length_penalty, 1.0);
}

TEST_F(CheckpointTest, TargetLengthRatioRoundTripsAndIsUnknownWhenAbsent) {
  Checkpoint measured = MakeCheckpoint();
  measured.target_ratio_low = 0.75;
  measured.target_ratio_high = 3.5;
  SaveCheckpoint(measured, directory_);
  const Checkpoint loaded = LoadCheckpoint(directory_, torch::kCPU);
  EXPECT_EQ(loaded.target_ratio_low, 0.75);
  EXPECT_EQ(loaded.target_ratio_high, 3.5);
  // original_ was saved without one.
  SaveCheckpoint(original_, directory_);
  const fs::path config_path = fs::path(directory_) / "config.json";
  EXPECT_FALSE(nlohmann::json::parse(std::ifstream(config_path))
                   .contains("target_length_ratio"));
  EXPECT_EQ(LoadCheckpoint(directory_, torch::kCPU).target_ratio_high, 0);
}

TEST_F(CheckpointTest, SavingAgainReplacesTheDirectory) {
  original_.model_version = "test-2";
  SaveCheckpoint(original_, directory_);
  EXPECT_EQ(LoadCheckpoint(directory_, torch::kCPU).model_version, "test-2");
  EXPECT_FALSE(fs::exists(directory_ + ".old"));
}

TEST_F(CheckpointTest, TruncatedWeightsAreRefusedNamingTheFile) {
  const fs::path weights = fs::path(directory_) / "model.pt";
  const auto size = fs::file_size(weights);
  fs::resize_file(weights, size / 2);
  const std::string error = ErrorOf(directory_);
  EXPECT_THAT(error, HasSubstr(weights.string()));
}

TEST_F(CheckpointTest, CorruptWeightsAreRefused) {
  Overwrite(fs::path(directory_) / "model.pt", "not a zip archive at all");
  EXPECT_THAT(ErrorOf(directory_), HasSubstr("model.pt"));
}

TEST_F(CheckpointTest, WrongVersionIsRefused) {
  const fs::path config_path = fs::path(directory_) / "config.json";
  nlohmann::json config = nlohmann::json::parse(std::ifstream(config_path));
  config["format_version"] = 99;
  Overwrite(config_path, config.dump());
  const std::string error = ErrorOf(directory_);
  EXPECT_THAT(error, HasSubstr("config.json"));
  EXPECT_THAT(error, HasSubstr("format_version 99"));
}

// A config.json field replaced by a badly typed value, and what the error
// must say. Before the fix, run through tests/fuzz/model_config_fuzzer, a
// string "format" of 5 escaped as nlohmann's type_error (without the file
// name) and 1e300 read as an integer was undefined behaviour (UBSan); 2.5
// heads were silently truncated to 2 and 2^64-1 wrapped to -1.
struct BadConfigCase {
  std::string name;
  std::string json_pointer;  // The field to replace, e.g. "/model/heads".
  std::string value;         // Its new value, as JSON.
  std::string expected_message_part;
};

class BadConfigTest : public CheckpointTest,
                      public ::testing::WithParamInterface<BadConfigCase> {};

TEST_P(BadConfigTest, IsRefusedWithRuntimeErrorNamingTheFile) {
  const BadConfigCase& c = GetParam();
  const fs::path config_path = fs::path(directory_) / "config.json";
  nlohmann::json config = nlohmann::json::parse(std::ifstream(config_path));
  config[nlohmann::json::json_pointer(c.json_pointer)] =
      nlohmann::json::parse(c.value);
  Overwrite(config_path, config.dump());
  // Only std::runtime_error is documented; anything else fails the test.
  try {
    LoadCheckpoint(directory_, torch::kCPU);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr(config_path.string()));
    EXPECT_THAT(error.what(), HasSubstr(c.expected_message_part));
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, BadConfigTest,
    ::testing::Values(
        BadConfigCase{"FormatNotString", "/format", "5",
                      "not a fanyi checkpoint config"},
        BadConfigCase{"VersionHuge", "/format_version", "1e300",
                      "\"format_version\" is missing or not an integer"},
        BadConfigCase{"VersionString", "/format_version", "\"1\"",
                      "\"format_version\" is missing or not an integer"},
        BadConfigCase{"DFfHuge", "/model/d_ff", "1e300",
                      "field 'd_ff' must be an integer"},
        BadConfigCase{"HeadsFraction", "/model/heads", "2.5",
                      "field 'heads' must be an integer"},
        BadConfigCase{"DModelAboveInt64", "/model/d_model",
                      "18446744073709551615",
                      "field 'd_model' is out of range"},
        BadConfigCase{"TargetCaseUnknown", "/target_case", "\"upper\"",
                      "unknown letter case \"upper\""},
        BadConfigCase{"SourceScriptUnknown", "/source_script",
                      "\"traditional\"",
                      "unknown source_script \"traditional\""},
        BadConfigCase{"LengthPenaltyNegative", "/length_penalty", "-0.5",
                      "length_penalty must not be negative"},
        BadConfigCase{"LengthPenaltyString", "/length_penalty", "\"1.2\"",
                      "length_penalty must be a number"},
        BadConfigCase{"LengthRatioNumber", "/target_length_ratio", "2",
                      "target_length_ratio must be [low, high]"},
        BadConfigCase{"LengthRatioThree", "/target_length_ratio", "[1, 2, 3]",
                      "target_length_ratio must be [low, high]"},
        BadConfigCase{"LengthRatioZero", "/target_length_ratio", "[0, 0]",
                      "target_length_ratio must be [low, high]"},
        BadConfigCase{"LengthRatioNegative", "/target_length_ratio", "[-1, 2]",
                      "target_length_ratio must be [low, high]"},
        BadConfigCase{"LengthRatioReversed", "/target_length_ratio", "[3, 2]",
                      "target_length_ratio must be [low, high]"}),
    [](const ::testing::TestParamInfo<BadConfigCase>& info) {
      return info.param.name;
    });

TEST_F(CheckpointTest, WrongShapeIsRefused) {
  const fs::path config_path = fs::path(directory_) / "config.json";
  nlohmann::json config = nlohmann::json::parse(std::ifstream(config_path));
  config["model"]["d_ff"] = 48;
  Overwrite(config_path, config.dump());
  const std::string error = ErrorOf(directory_);
  EXPECT_THAT(error, HasSubstr("model.pt"));
  EXPECT_THAT(error, HasSubstr("has shape"));
}

TEST_F(CheckpointTest, MissingVocabularyIsRefused) {
  fs::remove(fs::path(directory_) / "tgt_vocab.json");
  EXPECT_THAT(ErrorOf(directory_), HasSubstr("tgt_vocab.json"));
}

TEST_F(CheckpointTest, VocabularySizeMismatchIsRefused) {
  Vocabulary::Build({{"x", "y"}}, 1, 0)
      .Save((fs::path(directory_) / "src_vocab.json").string());
  const std::string error = ErrorOf(directory_);
  EXPECT_THAT(error, HasSubstr("src_vocab.json"));
  EXPECT_THAT(error, HasSubstr("6 tokens"));
}

TEST_F(CheckpointTest, MissingDirectoryIsRefused) {
  EXPECT_THAT(ErrorOf(directory_ + "-nowhere"), HasSubstr("does not exist"));
}

TEST_F(CheckpointTest, TrainingOutputDirectoryResolvesToBest) {
  const fs::path run = fs::path(directory_).parent_path() / "run";
  SaveCheckpoint(original_, (run / "best").string());
  EXPECT_EQ(ResolveCheckpointDirectory(run.string()), (run / "best").string());
  EXPECT_EQ(LoadCheckpoint(run.string(), torch::kCPU).model_version, "test-1");
}

// Averaging: the mean of each weight, the first checkpoint's config and
// vocabularies, and a clear error for checkpoints of another model.
TEST_F(CheckpointTest, AveragingGivesTheMeanOfEachWeight) {
  Checkpoint first = MakeCheckpoint();
  Checkpoint second = MakeCheckpoint();
  torch::manual_seed(9);
  {
    torch::NoGradGuard no_grad;
    for (auto& parameter : second.model->parameters()) {
      parameter.copy_(torch::randn_like(parameter));
    }
  }
  const std::string a = directory_ + "/a", b = directory_ + "/b";
  SaveCheckpoint(first, a);
  SaveCheckpoint(second, b);

  const Checkpoint average = AverageCheckpoints({a, b});
  auto first_parameters = first.model->named_parameters();
  auto second_parameters = second.model->named_parameters();
  for (const auto& parameter : average.model->named_parameters()) {
    const torch::Tensor expected = (first_parameters[parameter.key()] +
                                    second_parameters[parameter.key()]) /
                                   2;
    EXPECT_TRUE(torch::allclose(parameter.value(), expected, 1e-6, 1e-7))
        << parameter.key();
  }
  EXPECT_EQ(average.target_vocabulary.size(), first.target_vocabulary.size());
  EXPECT_EQ(average.model_version, "test-1-avg2");
  // It saves and loads like any checkpoint.
  SaveCheckpoint(average, directory_ + "/average");
  EXPECT_NO_THROW(LoadCheckpoint(directory_ + "/average", torch::kCPU));
  // One checkpoint averages to itself.
  const Checkpoint alone = AverageCheckpoints({a});
  auto alone_parameters = alone.model->named_parameters();
  for (const auto& parameter : first.model->named_parameters()) {
    EXPECT_TRUE(
        torch::equal(parameter.value(), alone_parameters[parameter.key()]));
  }
}

TEST_F(CheckpointTest, AveragingRefusesAnotherModelNamingIt) {
  const std::string a = directory_ + "/a", b = directory_ + "/b";
  SaveCheckpoint(MakeCheckpoint(), a);
  Checkpoint wider = MakeCheckpoint();
  ModelConfig config = wider.model->config();
  config.d_ff = 32;
  wider.model = Transformer(config);
  SaveCheckpoint(wider, b);
  try {
    AverageCheckpoints({a, b});
    ADD_FAILURE() << "averaged checkpoints of different models";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr(b));
    EXPECT_THAT(error.what(), HasSubstr("model config differs"));
  }
  EXPECT_THROW(AverageCheckpoints({}), std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
