// The training record of a checkpoint (trainer/training_record.h): a saved
// position reads back as it was written, with the corpus's files and the
// options beside it; records from before step reports read as complete
// epochs; a record without its position is refused naming the checkpoint.
#include "trainer/training_record.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "tests/test_util.h"
#include "trainer/corpus_preparation.h"

namespace fanyi {
namespace {

TEST(TrainingRecordTest, APositionReadsBackAsItWasSavedBesideTheRunsFiles) {
  PreparationOptions preparation;
  preparation.train_path = testing_util::SharedDataPath("en-zh/dev_mini.tsv");
  preparation.dev_path = preparation.train_path;
  preparation.threads = 1;
  std::ostringstream log;
  const PreparedCorpus corpus = PrepareCorpus(
      preparation, testing_util::MakeTempDir("training_record"), log);
  TrainingOptions options;
  options.lr_factor = 0.5;
  options.init_from = "models/earlier";
  TrainingPosition position;
  position.epoch = 3;
  position.step = 1234;
  position.epoch_complete = false;
  position.epoch_batches = 77;
  EpochReport report;
  report.dev_bleu = 21.5;
  report.elapsed_seconds = 600;

  const nlohmann::json record =
      TrainingRecord(position, report, options, corpus, /*world_size=*/2);
  const TrainingPosition read = ReadTrainingPosition(record, "out/last");
  EXPECT_EQ(read.epoch, 3);
  EXPECT_EQ(read.step, 1234);
  EXPECT_FALSE(read.epoch_complete);
  EXPECT_EQ(read.epoch_batches, 77);
  EXPECT_EQ(record.at("train"), preparation.train_path);
  EXPECT_EQ(record.at("data"), corpus.directory());
  EXPECT_EQ(record.at("dev_bleu"), 21.5);
  EXPECT_EQ(record.at("training_seconds"), 600);
  EXPECT_EQ(record.at("world_size"), 2);
  EXPECT_EQ(record.at("lr_factor"), 0.5);
  EXPECT_EQ(record.at("init_from"), "models/earlier");
  EXPECT_EQ(record.at("bidirectional"), false);
}

TEST(TrainingRecordTest, RecordsFromBeforeStepReportsAreCompleteEpochs) {
  const TrainingPosition read =
      ReadTrainingPosition({{"epoch", 2}, {"step", 90}}, "out/last");
  EXPECT_EQ(read.epoch, 2);
  EXPECT_EQ(read.step, 90);
  EXPECT_TRUE(read.epoch_complete);
  EXPECT_EQ(read.epoch_batches, 0);
}

TEST(TrainingRecordTest,
     ARecordWithoutItsPositionIsRefusedNamingTheCheckpoint) {
  for (const nlohmann::json& record :
       {nlohmann::json{{"epoch", 2}}, nlohmann::json{{"step", 90}},
        nlohmann::json{{"epoch", "two"}, {"step", 90}}}) {
    try {
      ReadTrainingPosition(record, "out/last");
      ADD_FAILURE() << record.dump() << " was accepted";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find("out/last"), std::string::npos)
          << error.what();
    }
  }
}

}  // namespace
}  // namespace fanyi
