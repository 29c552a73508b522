#include "trainer/trainer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/decoding/decoder_selection.h"
#include "common/model/checkpoint.h"
#include "common/pipeline/translator.h"
#include "common/text/parallel_corpus.h"
#include "common/text/script_converter.h"
#include "tests/random_model.h"
#include "tests/test_util.h"
#include "trainer/corpus_preparation.h"
#include "trainer/dev_evaluation.h"
#include "trainer/prepared_corpus.h"
#include "trainer/tensor_batch.h"
#include "trainer/token_batches.h"
#include "trainer/weight_transfer.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

TEST(NoamLearningRateTest, WarmsUpLinearlyThenDecays) {
  const double peak = NoamLearningRate(100, 64, 100, 1.0);
  EXPECT_NEAR(peak, std::pow(64, -0.5) * std::pow(100, -0.5), 1e-12);
  EXPECT_NEAR(NoamLearningRate(50, 64, 100, 1.0), peak / 2, 1e-12);
  EXPECT_NEAR(NoamLearningRate(400, 64, 100, 1.0), peak / 2, 1e-12);
  EXPECT_NEAR(NoamLearningRate(100, 64, 100, 2.0), 2 * peak, 1e-12);
}

TEST(TokenBatchesTest, EveryPairOnceWithinTheTokenBudget) {
  std::vector<PairLength> lengths;
  for (int i = 0; i < 500; ++i) lengths.push_back({1 + i % 17, 1 + i % 23});
  std::mt19937_64 rng(3);
  const auto batches = MakeTokenBatches(lengths, 100, rng);
  std::multiset<int64_t> seen;
  for (const auto& batch : batches) {
    int64_t longest = 0;
    for (int64_t index : batch) {
      seen.insert(index);
      longest =
          std::max({longest, lengths[index].source, lengths[index].target});
    }
    EXPECT_LE(longest * static_cast<int64_t>(batch.size()), 100);
  }
  EXPECT_EQ(seen.size(), lengths.size());
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), lengths.size());
}

TEST(TokenBatchesTest, BatchesGroupSimilarLengths) {
  std::vector<PairLength> lengths;
  for (int i = 0; i < 400; ++i) lengths.push_back({1 + i % 40, 1 + i % 40});
  std::mt19937_64 rng(5);
  int64_t padded = 0;
  int64_t real = 0;
  for (const auto& batch : MakeTokenBatches(lengths, 200, rng)) {
    int64_t longest = 0;
    for (int64_t index : batch) {
      longest = std::max(longest, lengths[index].source);
      real += lengths[index].source;
    }
    padded += longest * static_cast<int64_t>(batch.size());
  }
  // Random batching would pad about half of the tokens; buckets almost none.
  EXPECT_LT(padded, real * 11 / 10);
}

// How many of `corpus`'s sources the checkpoint translates exactly into
// their targets (which the trainer wrote in Simplified script).
int ExactTranslations(const std::string& checkpoint,
                      const ParallelCorpus& corpus) {
  std::vector<std::string> sources;
  for (const auto& pair : corpus.pairs) sources.push_back(pair.source);
  auto translator = Translator::Load(checkpoint, TranslatorOptions{"cpu", 1});
  const std::vector<std::string> translations = translator->Translate(sources);
  const ScriptConverter to_simplified(ChineseScript::kSimplified);
  int exact = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    exact += translations[i] == to_simplified.Convert(corpus.pairs[i].target);
  }
  return exact;
}

// Three pairs of ids (words from 4 up), of unequal lengths so that the
// tensors hold <pad>.
TensorBatch ThreePairs() {
  return MakeTensorBatch({{4, 5, 6, 7}, {8, 9}, {10, 11, 12}},
                         {{4, 5, 6}, {7, 8, 9, 10, 11}, {12}}, ModelConfig(),
                         torch::Device(torch::kCPU));
}

Transformer SmallModel(double dropout) {
  torch::manual_seed(7);
  ModelConfig config;
  config.source_vocab_size = 13;
  config.target_vocab_size = 13;
  config.encoder_layers = 1;
  config.decoder_layers = 1;
  config.d_model = 16;
  config.d_ff = 32;
  config.heads = 2;
  config.dropout = dropout;
  config.max_positions = 16;
  return Transformer(config);
}

TEST(TrainingLossTest, RDropWithoutDropoutIsThePlainLoss) {
  Transformer model = SmallModel(0.3);
  model->eval();  // No dropout: the two runs are one and the same.
  const TensorBatch batch = ThreePairs();
  const double plain = BatchLoss(*model, batch, 0.1).item<double>();
  const RDropLoss loss = BatchRDropLoss(*model, batch, 0.1, 5.0);
  EXPECT_NEAR(loss.cross_entropy.item<double>(), plain, 1e-4 * plain);
  EXPECT_NEAR(loss.divergence.item<double>(), 0.0, 1e-5);
  EXPECT_NEAR(loss.objective.item<double>(), plain, 1e-4 * plain);
}

TEST(TrainingLossTest, RDropAddsTheDivergenceOfTwoDropoutRuns) {
  Transformer model = SmallModel(0.3);
  model->train();
  const TensorBatch batch = ThreePairs();
  const RDropLoss loss = BatchRDropLoss(*model, batch, 0.1, 5.0);
  const double divergence = loss.divergence.item<double>();
  EXPECT_GT(divergence, 1e-3);
  EXPECT_NEAR(loss.objective.item<double>(),
              loss.cross_entropy.item<double>() + 5.0 / 4 * divergence,
              1e-5 * loss.objective.item<double>());
  // Its gradient pulls the two runs together: one step down the divergence
  // alone makes it smaller for the same dropout masks (same seed).
  torch::manual_seed(11);
  RDropLoss before = BatchRDropLoss(*model, batch, 0.1, 5.0);
  before.divergence.backward();
  {
    torch::NoGradGuard no_grad;
    for (torch::Tensor& parameter : model->parameters()) {
      if (parameter.grad().defined()) parameter -= 0.05 * parameter.grad();
    }
  }
  torch::manual_seed(11);
  const RDropLoss after = BatchRDropLoss(*model, batch, 0.1, 5.0);
  EXPECT_LT(after.divergence.item<double>(), before.divergence.item<double>());
}

TEST(TrainingLossTest, WordDropoutReplacesWordsAndKeepsSpecials) {
  const TensorBatch original = ThreePairs();
  TensorBatch none = ThreePairs();
  DropWords(0.0, &none);
  EXPECT_TRUE(torch::equal(none.source, original.source));
  EXPECT_TRUE(torch::equal(none.target_input, original.target_input));

  torch::manual_seed(3);
  TensorBatch all = ThreePairs();
  DropWords(0.999999, &all);
  for (auto [dropped, kept] :
       {std::pair{all.source, original.source},
        std::pair{all.target_input, original.target_input}}) {
    const torch::Tensor words = kept > Vocabulary::kEosId;  // [batch, len]
    EXPECT_TRUE(torch::equal(dropped.masked_select(words),
                             torch::full({words.sum().item<int64_t>()},
                                         Vocabulary::kUnkId, torch::kLong)));
    EXPECT_TRUE(torch::equal(dropped.masked_select(~words),
                             kept.masked_select(~words)));
  }
  // What the model learns to predict keeps every word.
  EXPECT_TRUE(torch::equal(all.target_output, original.target_output));

  // At 0.3, some of the 18 words go and some stay.
  torch::manual_seed(3);
  TensorBatch some = ThreePairs();
  DropWords(0.3, &some);
  const int64_t unknown =
      (some.source == Vocabulary::kUnkId).sum().item<int64_t>() +
      (some.target_input == Vocabulary::kUnkId).sum().item<int64_t>();
  EXPECT_GT(unknown, 0);
  EXPECT_LT(unknown, 18);
}

// Both regularizers on: training still fits thirty pairs, and the run's
// record says what it used.
TEST(TrainerTest, TrainsWithWordDropoutAndRDrop) {
  const std::string dir = testing_util::MakeTempDir("trainer_regularized");
  const std::string pairs = testing_util::WriteTinyPairs(dir, 30);
  const std::string checkpoint = testing_util::TrainTinyModelOn(
      pairs, (fs::path(dir) / "out").string(), [](TrainingOptions& options) {
        options.model.dropout = 0.1;
        options.word_dropout = 0.1;
        options.rdrop_weight = 1.0;
      });
  const nlohmann::json record =
      LoadCheckpoint(checkpoint, torch::Device(torch::kCPU)).training;
  EXPECT_EQ(record.value("word_dropout", 0.0), 0.1);
  EXPECT_EQ(record.value("rdrop_weight", 0.0), 1.0);

  EXPECT_GE(ExactTranslations(checkpoint, ReadParallelTsv(pairs)), 20)
      << "training with both regularizers fitted too little";
}

TEST(TrainerTest, OverfitsThirtyPairsAndReproducesTheirTargets) {
  const std::string parent = testing_util::MakeTempDir("trainer_overfit");
  const std::string checkpoint = testing_util::TrainTinyModel(parent, 30);
  ASSERT_TRUE(fs::exists(fs::path(checkpoint) / "model.pt"));
  ASSERT_TRUE(
      fs::exists(fs::path(checkpoint).parent_path() / "last" / "optimizer.pt"));
  ASSERT_TRUE(
      fs::exists(fs::path(checkpoint).parent_path() / "train_log.jsonl"));

  ParallelCorpus corpus =
      ReadParallelTsv((fs::path(parent) / "tiny_model" / "pairs.tsv").string());
  ASSERT_EQ(corpus.pairs.size(), 30u);
  EXPECT_GE(ExactTranslations(checkpoint, corpus), 28)
      << "the tiny model did not memorise its training pairs";
}

// The same thirty pairs the other way round, Chinese to English: the
// English comes back as it was written, capitals included, and the same
// when the Chinese comes in the other script (trained in Simplified, the
// model converts what it is given).
TEST(TrainerTest, SwappedColumnsTrainTheOtherDirectionWithCasedOutput) {
  const std::string parent = testing_util::MakeTempDir("trainer_zh_en");
  const fs::path pairs = fs::path(parent) / "pairs.tsv";
  {
    std::ifstream in(testing_util::SharedDataPath("en-zh/train_mini.tsv"));
    std::ofstream out(pairs);
    std::string line;
    for (int i = 0; i < 30 && std::getline(in, line); ++i) out << line << "\n";
  }
  const std::string checkpoint = testing_util::TrainTinyModelOn(
      pairs.string(), parent + "/zh_en", [](TrainingOptions& options) {
        options.corpus.columns = TsvColumns{1, 0};
        options.corpus.source_language = "zh";
        options.corpus.target_language = "en";
      });

  const ParallelCorpus corpus = ReadParallelTsv(pairs.string());
  std::vector<std::string> sources;
  for (const auto& pair : corpus.pairs) sources.push_back(pair.target);
  auto translator = Translator::Load(checkpoint, TranslatorOptions{"cpu", 1});
  const std::vector<std::string> translations = translator->Translate(sources);
  int exact = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    exact += translations[i] == corpus.pairs[i].source;
  }
  EXPECT_GE(exact, 27) << "first: " << translations[0] << " for "
                       << corpus.pairs[0].source;
  EXPECT_TRUE(std::any_of(
      translations.begin(), translations.end(), [](const std::string& text) {
        return std::any_of(text.begin(), text.end(), ::isupper);
      }));
  EXPECT_EQ(LoadCheckpoint(checkpoint, torch::kCPU).target_case,
            WordCase::kKeep);

  std::vector<std::string> traditional_sources;
  const ScriptConverter to_traditional(ChineseScript::kTraditionalTaiwan);
  for (const std::string& source : sources) {
    traditional_sources.push_back(to_traditional.Convert(source));
  }
  EXPECT_NE(traditional_sources, sources);
  const std::vector<std::string> from_traditional =
      translator->Translate(traditional_sources);
  int exact_from_traditional = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    exact_from_traditional += from_traditional[i] == corpus.pairs[i].source;
  }
  EXPECT_GE(exact_from_traditional, 27)
      << "first: " << from_traditional[0] << " for " << traditional_sources[0];
  EXPECT_TRUE(translator->pipeline().normalizes_source_script());
}

TEST(TrainerTest, BadLinesAreCountedAndTrainingGoesOn) {
  const std::string directory = testing_util::MakeTempDir("trainer_bad_lines");
  const fs::path data = fs::path(directory) / "pairs.tsv";
  {
    std::ofstream out(data);
    out << "Hello.\t你好。\n"
        << "no tab here\n"
        << "\tempty source\n"
        << "Bad \xff bytes\t坏\n"
        << "Thank you.\t谢谢。\n";
  }
  TrainingOptions options = testing_util::TinyTrainingOptions(
      data.string(), (fs::path(directory) / "run").string());
  options.epochs = 2;
  std::ostringstream log;
  TrainingResult result = Trainer(options).Run(log);
  EXPECT_EQ(result.skipped_train_lines, 3);
  EXPECT_EQ(result.epochs.size(), 2u);
  EXPECT_NE(log.str().find(":2: skipped: no tab"), std::string::npos)
      << log.str();
  EXPECT_TRUE(fs::exists(fs::path(result.best_checkpoint) / "model.pt"));
}

// One quick epoch on dev_mini.tsv into `directory`/run.
TrainingOptions OneEpochOnDevMini(const std::string& directory) {
  TrainingOptions options = testing_util::TinyTrainingOptions(
      testing_util::SharedDataPath("en-zh/dev_mini.tsv"),
      (fs::path(directory) / "run").string());
  options.batch_tokens = 512;
  options.epochs = 1;
  return options;
}

TEST(TrainerTest, ResumeContinuesFromTheLastCheckpoint) {
  const std::string directory = testing_util::MakeTempDir("trainer_resume");
  TrainingOptions options = OneEpochOnDevMini(directory);
  std::ostringstream log;
  const TrainingResult first = Trainer(options).Run(log);
  ASSERT_EQ(first.epochs.size(), 1u);
  const int64_t first_steps = first.epochs.back().step;

  options.epochs = 2;
  options.resume = true;
  const TrainingResult resumed = Trainer(options).Run(log);
  ASSERT_EQ(resumed.epochs.size(), 1u);
  EXPECT_EQ(resumed.epochs.back().epoch, 2);
  EXPECT_GT(resumed.epochs.back().step, first_steps);
  EXPECT_NE(log.str().find("resumed from"), std::string::npos);
  const Checkpoint last = LoadCheckpoint(resumed.last_checkpoint, torch::kCPU);
  EXPECT_EQ(last.training["epoch"], 2);
  EXPECT_EQ(last.training["step"], resumed.epochs.back().step);
}

// A second run into the same --out without --resume is refused before it
// touches anything: best/ (what the servers serve) stays as it was.
TEST(TrainerTest, RerunWithoutResumeIsRefusedAndBestIsUntouched) {
  const std::string directory = testing_util::MakeTempDir("trainer_rerun");
  TrainingOptions options = OneEpochOnDevMini(directory);
  std::ostringstream log;
  const TrainingResult first = Trainer(options).Run(log);
  const fs::path best_weights = fs::path(first.best_checkpoint) / "model.pt";
  const auto best_written = fs::last_write_time(best_weights);
  const std::string best_version =
      LoadCheckpoint(first.best_checkpoint, torch::kCPU).model_version;

  try {
    Trainer(options).Run(log);
    FAIL() << "a rerun without --resume started";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fs::last_write_time(best_weights), best_written);
  EXPECT_EQ(LoadCheckpoint(first.best_checkpoint, torch::kCPU).model_version,
            best_version);

  // --resume into an empty --out starts a run.
  options.out_dir = (fs::path(directory) / "fresh").string();
  options.resume = true;
  const TrainingResult fresh = Trainer(options).Run(log);
  EXPECT_EQ(fresh.epochs.size(), 1u);
  EXPECT_NE(log.str().find("starting one"), std::string::npos);
}

TEST(TrainerTest, AveragesTheLastSavesAtTheEnd) {
  const std::string directory = testing_util::MakeTempDir("trainer_keep");
  TrainingOptions options = testing_util::TinyTrainingOptions(
      testing_util::SharedDataPath("en-zh/dev_mini.tsv"),
      (fs::path(directory) / "run").string());
  options.batch_tokens = 512;
  options.epochs = 4;
  options.average_last = 2;
  std::ostringstream log;
  const TrainingResult result = Trainer(options).Run(log);
  const fs::path kept = fs::path(options.out_dir) / "epochs";
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kept)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  // Saves are named by their step.
  ASSERT_EQ(result.epochs.size(), 4u);
  auto save_name = [](int64_t step) {
    char name[32];
    std::snprintf(name, sizeof(name), "step-%010lld",
                  static_cast<long long>(step));
    return std::string(name);
  };
  const std::string third_name = save_name(result.epochs[2].step);
  const std::string fourth_name = save_name(result.epochs[3].step);
  EXPECT_EQ(names, (std::vector<std::string>{third_name, fourth_name}));
  // The newest equals last/.
  const Checkpoint newest =
      LoadCheckpoint((kept / fourth_name).string(), torch::kCPU);
  const Checkpoint last = LoadCheckpoint(
      (fs::path(options.out_dir) / "last").string(), torch::kCPU);
  EXPECT_EQ(newest.training["step"], last.training["step"]);
  auto last_parameters = last.model->named_parameters();
  for (const auto& parameter : newest.model->named_parameters()) {
    EXPECT_TRUE(
        torch::equal(parameter.value(), last_parameters[parameter.key()]))
        << parameter.key();
  }
  // averaged/ holds the mean of the two, scored on dev; best/ is whichever
  // scored higher.
  const Checkpoint averaged = LoadCheckpoint(
      (fs::path(options.out_dir) / "averaged").string(), torch::kCPU);
  const Checkpoint third =
      LoadCheckpoint((kept / third_name).string(), torch::kCPU);
  auto third_parameters = third.model->named_parameters();
  for (const auto& parameter : averaged.model->named_parameters()) {
    const torch::Tensor mean =
        (third_parameters[parameter.key()] + last_parameters[parameter.key()]) /
        2;
    EXPECT_TRUE(torch::allclose(parameter.value(), mean, 1e-5, 1e-6))
        << parameter.key();
  }
  const double averaged_bleu = averaged.training["dev_bleu"];
  const double best_single = averaged.training["best_single_dev_bleu"];
  EXPECT_NE(log.str().find("averaged the last 2 saves"), std::string::npos)
      << log.str();
  EXPECT_DOUBLE_EQ(result.best_dev_bleu, std::max(averaged_bleu, best_single));
  const Checkpoint best = LoadCheckpoint(
      (fs::path(options.out_dir) / "best").string(), torch::kCPU);
  EXPECT_EQ(best.model_version == averaged.model_version,
            averaged_bleu > best_single);
}

TEST(TrainerTest, ChoosesTheLengthPenaltyOnDevAndBestKeepsIt) {
  // A model of a few seconds: still poor, so the length penalty moves its
  // beam search's output lengths, and BLEU with them.
  const std::string directory = testing_util::MakeTempDir("trainer_alpha");
  TrainingOptions options = testing_util::TinyTrainingOptions(
      testing_util::SharedDataPath("en-zh/dev_mini.tsv"),
      (fs::path(directory) / "run").string());
  options.batch_tokens = 512;
  options.epochs = 20;
  options.average_last = 0;
  options.length_penalties = {3.0, 0.0, 1.0};
  std::ostringstream log;
  const TrainingResult result = Trainer(options).Run(log);
  EXPECT_NE(log.str().find("best/ decodes beam search with length penalty"),
            std::string::npos)
      << log.str();

  // Each trial is DevBleu of best/'s weights, decoded as a server loads
  // them, with that α; best/ keeps the α of the highest.
  const std::string best_dir = (fs::path(options.out_dir) / "best").string();
  const Checkpoint best = LoadCheckpoint(best_dir, torch::kCPU);
  const DevSet dev =
      PreparedCorpus::Open((fs::path(options.out_dir) / "data").string())
          .ReadDev();
  const nlohmann::json& trials = best.training.at("length_penalty_trials");
  ASSERT_EQ(trials.size(), 3u);
  double highest = -1;
  double chosen = -1;
  std::set<double> bleus;
  for (size_t i = 0; i < trials.size(); ++i) {
    const double length_penalty = trials[i].at("length_penalty");
    EXPECT_EQ(length_penalty, (std::vector<double>{0.0, 1.0, 3.0}[i]));
    Checkpoint decoded = LoadCheckpoint(best_dir, torch::kCPU);
    SelectDecoder(*decoded.model, "packed", "int8");
    decoded.length_penalty = length_penalty;
    const double bleu = DevBleu(decoded, dev, nullptr, kLengthPenaltyBeam);
    EXPECT_EQ(trials[i].at("dev_bleu").get<double>(), bleu) << length_penalty;
    if (bleu > highest) {
      highest = bleu;
      chosen = length_penalty;
    }
    bleus.insert(bleu);
  }
  ASSERT_GT(bleus.size(), 1u) << "every α gave the same BLEU";
  EXPECT_EQ(best.length_penalty, chosen);
  EXPECT_EQ(result.length_penalty, chosen);
  // Loaded as it is, best/ decodes with its own α.
  Checkpoint served = LoadCheckpoint(best_dir, torch::kCPU);
  SelectDecoder(*served.model, "packed", "int8");
  EXPECT_EQ(DevBleu(served, dev, nullptr, kLengthPenaltyBeam), highest);
  EXPECT_EQ(Translator::Load(best_dir, {})->length_penalty(), chosen);
}

// The largest difference between two checkpoints' weights.
double LargestDifference(const std::string& a, const std::string& b) {
  return testing_util::LargestWeightDifference(
      LoadCheckpoint(a, torch::kCPU).model,
      LoadCheckpoint(b, torch::kCPU).model);
}

// One epoch on dev_mini.tsv without dropout: the same batches give the same
// weights.
TrainingOptions DeterministicEpoch(const std::string& out_dir) {
  TrainingOptions options = testing_util::TinyTrainingOptions(
      testing_util::SharedDataPath("en-zh/dev_mini.tsv"), out_dir);
  options.model.dropout = 0.0;
  options.batch_tokens = 256;
  options.shuffle_window = 64;  // Several windows an epoch.
  options.epochs = 1;
  options.average_last = 0;
  return options;
}

TEST(TrainerTest, StepReportsSaveMidEpochAndResumeGoesOnFromThere) {
  const std::string directory = testing_util::MakeTempDir("trainer_steps");
  std::ostringstream log;
  const TrainingResult whole =
      Trainer(DeterministicEpoch(directory + "/whole")).Run(log);
  ASSERT_EQ(whole.epochs.size(), 1u);
  const int64_t epoch_steps = whole.epochs.back().step;
  ASSERT_GE(epoch_steps, 8) << "too few steps an epoch to stop within one";

  // Stopped after 5 steps, with reports every 2: saves at steps 2, 4 and 5,
  // all within the first epoch.
  TrainingOptions options = DeterministicEpoch(directory + "/stopped");
  options.max_steps = 5;
  options.validate_every_steps = 2;
  const TrainingResult stopped = Trainer(options).Run(log);
  ASSERT_EQ(stopped.epochs.size(), 3u);
  EXPECT_EQ(stopped.epochs[0].step, 2);
  EXPECT_EQ(stopped.epochs[2].step, 5);
  const Checkpoint last = LoadCheckpoint(stopped.last_checkpoint, torch::kCPU);
  EXPECT_EQ(last.training["epoch"], 1);
  EXPECT_EQ(last.training["epoch_complete"], false);

  // Resumed, it trains the rest of the epoch's batches, no more and no
  // fewer: the weights of the run that never stopped.
  options.max_steps = 0;
  options.validate_every_steps = 0;
  options.resume = true;
  std::ostringstream resume_log;
  const TrainingResult resumed = Trainer(options).Run(resume_log);
  EXPECT_NE(resume_log.str().find("within the epoch"), std::string::npos)
      << resume_log.str();
  ASSERT_EQ(resumed.epochs.size(), 1u);
  EXPECT_EQ(resumed.epochs.back().step, epoch_steps);
  EXPECT_LT(LargestDifference(whole.last_checkpoint, resumed.last_checkpoint),
            1e-6);
}

TEST(TrainerTest, APreparedCorpusTrainsAsItsRawText) {
  const std::string directory = testing_util::MakeTempDir("trainer_data");
  std::ostringstream log;
  TrainingOptions raw = DeterministicEpoch(directory + "/raw");
  raw.model.dropout = 0.1;  // The same seed: the same dropout too.
  const TrainingResult from_text = Trainer(raw).Run(log);

  // Prepared apart, on two threads, with the trainer's length cap.
  PreparationOptions preparation = raw.corpus;
  preparation.max_tokens = raw.model.max_positions - 1;
  preparation.threads = 2;
  const PreparedCorpus corpus =
      PrepareCorpus(preparation, directory + "/prepared", log);
  TrainingOptions prepared = raw;
  prepared.corpus = PreparationOptions();
  prepared.corpus.train_path.clear();
  prepared.corpus.dev_path.clear();
  prepared.data_dir = corpus.directory();
  prepared.out_dir = directory + "/from_data";
  const TrainingResult from_data = Trainer(prepared).Run(log);
  EXPECT_EQ(
      LargestDifference(from_text.last_checkpoint, from_data.last_checkpoint),
      0.0);
  EXPECT_DOUBLE_EQ(from_data.epochs.back().dev_bleu,
                   from_text.epochs.back().dev_bleu);

  // A model whose positions cannot hold the corpus's pairs is refused.
  prepared.out_dir = directory + "/too_short";
  prepared.model.max_positions = 32;
  EXPECT_THROW(Trainer(prepared).Run(log), std::runtime_error);
  // --data and --train together are refused.
  prepared.corpus.train_path = raw.corpus.train_path;
  EXPECT_THROW(Trainer{prepared}, std::invalid_argument);
}

// An --out the trainer cannot create (here: under a file; in a container,
// on a volume another user owns) is refused naming it and the user.
// Bidirectional training's two stages: a model trained on both directions
// of dev_mini.tsv in one vocabulary, then a one-direction run started from
// it. With a learning rate too small to move them, the second run's weights
// are the first's: every layer as it was, each embedding row taken from
// the same token's row, in the first model's shape whatever the options
// said.
TEST(TrainerTest, ABidirectionalModelStartsAOneDirectionRun) {
  const std::string directory = testing_util::MakeTempDir("trainer_both");
  std::ostringstream log;
  TrainingOptions both = DeterministicEpoch(directory + "/both");
  both.corpus.bidirectional = true;
  const TrainingResult first = Trainer(both).Run(log);
  const Checkpoint joint = LoadCheckpoint(first.last_checkpoint, torch::kCPU);
  ASSERT_EQ(joint.source_vocabulary.size(), joint.target_vocabulary.size());
  EXPECT_EQ(joint.source_vocabulary.Id("the"),
            joint.target_vocabulary.Id("the"));
  EXPECT_EQ(joint.source_vocabulary.Id("我"), joint.target_vocabulary.Id("我"));
  EXPECT_NE(joint.source_vocabulary.Id("我"), Vocabulary::kUnkId);
  EXPECT_TRUE(joint.training.at("bidirectional").get<bool>());

  TrainingOptions one = DeterministicEpoch(directory + "/one");
  one.init_from = directory + "/both";
  one.model.d_ff = 2 * both.model.d_ff;  // Taken from the model instead.
  one.lr_factor = 1e-12;
  one.max_steps = 1;
  std::ostringstream one_log;
  const TrainingResult second = Trainer(one).Run(one_log);
  const Checkpoint started =
      LoadCheckpoint(second.last_checkpoint, torch::kCPU);
  EXPECT_EQ(started.model->config().d_ff, both.model.d_ff);
  EXPECT_LT(started.source_vocabulary.size(), joint.source_vocabulary.size());
  EXPECT_LT(started.target_vocabulary.size(), joint.target_vocabulary.size());
  EXPECT_NE(one_log.str().find(
                "started from " + one.init_from + ": " +
                std::to_string(started.source_vocabulary.size()) + " of " +
                std::to_string(started.source_vocabulary.size()) + " source"),
            std::string::npos)
      << one_log.str();
  EXPECT_EQ(started.training.at("init_from"), one.init_from);
  auto given = joint.model->named_parameters();
  double largest = 0;
  for (const auto& item : started.model->named_parameters()) {
    const std::string& name = item.key();
    const torch::Tensor& weights = item.value();
    const torch::Tensor& from = given[name];
    if (name == "source_embedding.weight" ||
        name == "target_embedding.weight") {
      const Vocabulary& mine = name == "source_embedding.weight"
                                   ? started.source_vocabulary
                                   : started.target_vocabulary;
      const Vocabulary& theirs = name == "source_embedding.weight"
                                     ? joint.source_vocabulary
                                     : joint.target_vocabulary;
      for (int64_t id = 0; id < mine.size(); ++id) {
        const int64_t at = theirs.Id(mine.Token(id));
        ASSERT_TRUE(at != Vocabulary::kUnkId || id == Vocabulary::kUnkId)
            << mine.Token(id);
        largest = std::max(largest,
                           (weights[id] - from[at]).abs().max().item<double>());
      }
    } else {
      largest = std::max(largest, (weights - from).abs().max().item<double>());
    }
  }
  EXPECT_LT(largest, 1e-6);
}

// A checkpoint of random weights with these tokens after the specials.
Checkpoint RandomCheckpoint(const std::vector<std::string>& source,
                            const std::vector<std::string>& target,
                            int64_t d_ff, bool tied) {
  auto vocabulary = [](const std::vector<std::string>& tokens) {
    std::vector<std::string> all = {
        Vocabulary::kPadToken, Vocabulary::kUnkToken, Vocabulary::kBosToken,
        Vocabulary::kEosToken};
    all.insert(all.end(), tokens.begin(), tokens.end());
    return Vocabulary(all);
  };
  Checkpoint checkpoint;
  checkpoint.source_vocabulary = vocabulary(source);
  checkpoint.target_vocabulary = vocabulary(target);
  ModelConfig config;
  config.source_vocab_size = checkpoint.source_vocabulary.size();
  config.target_vocab_size = checkpoint.target_vocabulary.size();
  config.encoder_layers = config.decoder_layers = 1;
  config.d_model = 8;
  config.d_ff = d_ff;
  config.heads = 2;
  config.max_positions = 16;
  config.tie_target_embeddings = tied;
  checkpoint.model = Transformer(config);
  return checkpoint;
}

// Rows go over by token (the generator's bias too), rows of tokens the
// other model lacks stay, and another shape is refused naming the tensor.
TEST(WeightTransferTest, RowsFollowTheirTokensAndOtherShapesAreRefused) {
  const Checkpoint from = RandomCheckpoint({"a", "b", "c"}, {"x", "y"}, 16,
                                           /*tied=*/false);
  Checkpoint to = RandomCheckpoint({"c", "d", "a"}, {"y", "z"}, 16, false);
  auto before = to.model->named_parameters();
  const torch::Tensor unchanged_d =
      before["source_embedding.weight"][5].clone();
  const torch::Tensor unchanged_z = before["generator.weight"][5].clone();
  const WeightTransfer transfer = TransferWeights(from, to);
  EXPECT_EQ(transfer.source_tokens_found, 6);  // 4 specials, c and a.
  EXPECT_EQ(transfer.target_tokens_found, 5);  // 4 specials and y.
  auto given = from.model->named_parameters();
  auto taken = to.model->named_parameters();
  const torch::Tensor source = taken["source_embedding.weight"];
  EXPECT_TRUE(source[4].equal(given["source_embedding.weight"][6]));  // c
  EXPECT_TRUE(source[6].equal(given["source_embedding.weight"][4]));  // a
  EXPECT_TRUE(source[1].equal(given["source_embedding.weight"][1]));  // <unk>
  EXPECT_TRUE(source[5].equal(unchanged_d));                          // d
  for (const char* name :
       {"target_embedding.weight", "generator.weight", "generator.bias"}) {
    EXPECT_TRUE(taken[name][4].equal(given[name][5])) << name;  // y
  }
  EXPECT_TRUE(taken["generator.weight"][5].equal(unchanged_z));  // z
  EXPECT_TRUE(taken["encoder_layers.0.feed_forward.inner.weight"].equal(
      given["encoder_layers.0.feed_forward.inner.weight"]));

  Checkpoint wider = RandomCheckpoint({"a"}, {"x"}, 32, false);
  try {
    TransferWeights(from, wider);
    FAIL() << "a model of another d_ff was taken";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("feed_forward"), std::string::npos)
        << error.what();
  }
  Checkpoint tied = RandomCheckpoint({"a"}, {"x"}, 16, true);
  EXPECT_THROW(TransferWeights(from, tied), std::invalid_argument);
}

TEST(TrainerTest, AnOutputItCannotWriteIsNamedWithTheUser) {
  const std::string directory = testing_util::MakeTempDir("trainer_unwritable");
  std::ofstream(directory + "/file") << "not a directory";
  TrainingOptions options = DeterministicEpoch(directory + "/file/run");
  std::ostringstream log;
  try {
    Trainer(options).Run(log);
    FAIL() << "trained into " << options.out_dir;
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("cannot write to " + options.out_dir),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("runs as user " + std::to_string(getuid()) + ":"),
              std::string::npos)
        << message;
  }
}

TEST(TrainerTest, BadOptionsAreRefused) {
  TrainingOptions options;
  options.corpus.train_path = "a.tsv";
  options.corpus.dev_path = "b.tsv";
  options.out_dir = "out";
  options.label_smoothing = 1.5;
  EXPECT_THROW(Trainer{options}, std::invalid_argument);
  options.label_smoothing = 0.1;
  options.word_dropout = 1.0;
  EXPECT_THROW(Trainer{options}, std::invalid_argument);
  options.word_dropout = 0.1;
  options.rdrop_weight = -1;
  EXPECT_THROW(Trainer{options}, std::invalid_argument);
  options.rdrop_weight = 0;
  options.length_penalties = {1.0, -0.5};
  EXPECT_THROW(Trainer{options}, std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
