// DataParallel: ranks of a real Gloo group on 127.0.0.1 (threads of this
// process, each with its own TCPStore client and process group) sum
// tensors across the group and copy rank 0's; a rank that never comes or leaves
// makes the others fail within the timeout; the rendezvous variables are
// parsed; ranks that share the dev set measure what one process does.
#include "trainer/data_parallel.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/full.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/model/checkpoint.h"
#include "tests/test_util.h"
#include "trainer/dev_evaluation.h"
#include "trainer/prepared_corpus.h"

namespace fanyi {
namespace {

using std::chrono::milliseconds;

RendezvousEnvironment Rank(int rank, int world_size, int port) {
  RendezvousEnvironment environment;
  environment.master_address = "127.0.0.1";
  environment.master_port = port;
  environment.world_size = world_size;
  environment.rank = rank;
  return environment;
}

TEST(DataParallelTest, SumsTensorsAcrossRanksInBuckets) {
  static constexpr int kRanks = 3;
  const int port = testing_util::FreePort();
  std::vector<std::future<std::vector<torch::Tensor>>> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.push_back(std::async(std::launch::async, [rank, port] {
      DataParallel group(Rank(rank, kRanks, port), torch::kCPU,
                         milliseconds(30000));
      EXPECT_EQ(group.rank(), rank);
      EXPECT_EQ(group.world_size(), kRanks);
      // Rank r holds (r + 1) × [0, 1, ...] in tensors of several shapes.
      std::vector<torch::Tensor> tensors = {
          at::arange(12, at::kFloat).view({3, 4}) * (rank + 1),
          at::arange(5, at::kFloat) * (rank + 1),
          at::arange(1000, at::kFloat).view({10, 100}) * (rank + 1)};
      // 64-byte buckets: several tensors per bucket and one bucket per
      // large tensor, so both paths run.
      group.SumInPlace(tensors, 64);
      EXPECT_DOUBLE_EQ(group.Sum(rank + 0.5), 0.5 + 1.5 + 2.5);
      // Rank 0's values everywhere.
      std::vector<torch::Tensor> mine = {at::full({7}, float(rank)),
                                         at::full({2, 3}, float(rank * 10))};
      group.CopyFromFirstRank(mine, 16);
      EXPECT_TRUE(at::allclose(mine[0], at::full({7}, 0.0f)));
      EXPECT_TRUE(at::allclose(mine[1], at::full({2, 3}, 0.0f)));
      // Each rank's bytes on rank 0, in rank order, twice (numbered calls).
      for (const std::string round : {"a", "b"}) {
        const std::vector<std::string> gathered =
            group.GatherOnFirstRank(round + std::to_string(rank));
        if (rank == 0) {
          EXPECT_EQ(gathered, (std::vector<std::string>{
                                  round + "0", round + "1", round + "2"}));
        } else {
          EXPECT_TRUE(gathered.empty());
        }
      }
      return tensors;
    }));
  }
  const double factor = 1 + 2 + 3;
  for (auto& rank : ranks) {
    const std::vector<torch::Tensor> tensors = rank.get();
    EXPECT_TRUE(at::allclose(tensors[0],
                             at::arange(12, at::kFloat).view({3, 4}) * factor));
    EXPECT_TRUE(at::allclose(tensors[1], at::arange(5, at::kFloat) * factor));
    EXPECT_TRUE(at::allclose(
        tensors[2], at::arange(1000, at::kFloat).view({10, 100}) * factor));
  }
}

TEST(DataParallelTest, ARankThatNeverComesFailsTheOthersInTime) {
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(DataParallel(Rank(0, 2, testing_util::FreePort()), torch::kCPU,
                            milliseconds(2000)),
               std::runtime_error);
  EXPECT_LT(std::chrono::steady_clock::now() - started,
            std::chrono::seconds(30));
}

TEST(DataParallelTest, ARankThatLeavesFailsTheOthersInTime) {
  const int port = testing_util::FreePort();
  // Rank 1 leaves once rank 0 has joined too: leaving while rank 0 still
  // connects would fail rank 0's join instead, which is another test.
  std::promise<void> joined;
  auto leaver = std::async(std::launch::async, [port, &joined] {
    DataParallel group(Rank(1, 2, port), torch::kCPU, milliseconds(5000));
    joined.get_future().wait();
    // Leaves without taking part in the next collective.
  });
  DataParallel group(Rank(0, 2, port), torch::kCPU, milliseconds(5000));
  joined.set_value();
  leaver.get();
  const auto started = std::chrono::steady_clock::now();
  std::vector<torch::Tensor> tensors = {at::full({4}, 1.0f)};
  EXPECT_THROW(group.SumInPlace(tensors), std::runtime_error);
  EXPECT_LT(std::chrono::steady_clock::now() - started,
            std::chrono::seconds(30));
}

TEST(DataParallelTest, OneRankNeedsNoPeersAndChecksItsTensors) {
  DataParallel alone(Rank(0, 1, testing_util::FreePort()), torch::kCPU,
                     milliseconds(5000));
  std::vector<torch::Tensor> tensors = {at::full({3}, 2.0f)};
  alone.SumInPlace(tensors);
  EXPECT_TRUE(at::allclose(tensors[0], at::full({3}, 2.0f)));
  EXPECT_DOUBLE_EQ(alone.Sum(1.5), 1.5);
  EXPECT_EQ(alone.GatherOnFirstRank("x"), std::vector<std::string>{"x"});
  std::vector<torch::Tensor> doubles = {at::full({3}, 2.0, at::kDouble)};
  EXPECT_THROW(alone.SumInPlace(doubles), std::invalid_argument);
  std::vector<torch::Tensor> strided = {at::full({4, 4}, 1.0f).t()};
  EXPECT_THROW(alone.SumInPlace(strided), std::invalid_argument);
}

TEST(DataParallelTest, RanksShareTheDevSetAndAgreeWithOneProcess) {
  // The tiny model that fits its 30 pairs, and those pairs five times over
  // as a dev set: batches of 64, 64 and 22 sources, so that of four ranks
  // three take a batch each and one takes none.
  const std::string model_dir =
      testing_util::TrainTinyModel(testing_util::MakeTempDir("dev_share"));
  DevSet dev =
      PreparedCorpus::Open(
          (std::filesystem::path(model_dir).parent_path() / "data").string())
          .ReadDev();
  ASSERT_EQ(dev.texts.size(), 30u);
  const DevSet pairs = dev;
  for (int copy = 1; copy < 5; ++copy) {
    for (size_t i = 0; i < pairs.texts.size(); ++i) {
      dev.sources.push_back(pairs.sources[i]);
      dev.targets.push_back(pairs.targets[i]);
      dev.texts.push_back(pairs.texts[i]);
      dev.references.push_back(pairs.references[i]);
    }
  }
  Checkpoint alone = LoadCheckpoint(model_dir, torch::kCPU);
  alone.model->eval();
  const double loss = DevLoss(*alone.model, dev, torch::kCPU);
  const double bleu = DevBleu(alone, dev);
  EXPECT_GT(bleu, 50);  // It translates its pairs.
  const std::vector<double> length_penalties = {2.5, 0.0, 1.0};
  const LengthPenaltyChoice choice =
      ChooseLengthPenalty(alone, dev, length_penalties, /*beam_size=*/4);
  ASSERT_EQ(choice.dev_bleu.size(), 3u);
  EXPECT_EQ(choice.dev_bleu[0].first, 0.0);  // Tried in rising order.
  EXPECT_EQ(choice.dev_bleu[2].first, 2.5);

  static constexpr int kRanks = 4;
  const int port = testing_util::FreePort();
  struct Measures {
    double loss = 0;
    double bleu = 0;
    LengthPenaltyChoice choice;
  };
  std::vector<std::future<Measures>> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.push_back(std::async(std::launch::async, [&, rank] {
      DataParallel group(Rank(rank, kRanks, port), torch::kCPU,
                         milliseconds(60000));
      Checkpoint mine = LoadCheckpoint(model_dir, torch::kCPU);
      mine.model->eval();
      Measures measures;
      measures.loss = DevLoss(*mine.model, dev, torch::kCPU, &group);
      measures.bleu = DevBleu(mine, dev, &group);
      measures.choice =
          ChooseLengthPenalty(mine, dev, length_penalties, 4, &group);
      return measures;
    }));
  }
  for (auto& rank : ranks) {
    const Measures shared = rank.get();
    EXPECT_NEAR(shared.loss, loss, 1e-9 * loss);  // Summed in another order.
    EXPECT_EQ(shared.bleu, bleu);                 // The same translations.
    EXPECT_EQ(shared.choice.dev_bleu, choice.dev_bleu);
    EXPECT_EQ(shared.choice.length_penalty, choice.length_penalty);
  }
}

TEST(DataParallelTest, ReadsTheRendezvousVariables) {
  for (const char* name :
       {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"}) {
    unsetenv(name);
  }
  RendezvousEnvironment one = RendezvousEnvironment::FromEnvironment();
  EXPECT_EQ(one.world_size, 1);
  EXPECT_EQ(one.rank, 0);
  setenv("WORLD_SIZE", "4", 1);
  EXPECT_THROW(RendezvousEnvironment::FromEnvironment(),
               std::invalid_argument);  // No MASTER_ADDR.
  setenv("MASTER_ADDR", "trainer-0.trainer", 1);
  setenv("MASTER_PORT", "23456", 1);
  setenv("RANK", "3", 1);
  const RendezvousEnvironment four = RendezvousEnvironment::FromEnvironment();
  EXPECT_EQ(four.master_address, "trainer-0.trainer");
  EXPECT_EQ(four.master_port, 23456);
  EXPECT_EQ(four.world_size, 4);
  EXPECT_EQ(four.rank, 3);
  setenv("RANK", "4", 1);  // Out of range.
  EXPECT_THROW(RendezvousEnvironment::FromEnvironment(), std::invalid_argument);
  setenv("RANK", "x", 1);
  EXPECT_THROW(RendezvousEnvironment::FromEnvironment(), std::invalid_argument);
  for (const char* name :
       {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"}) {
    unsetenv(name);
  }
}

}  // namespace
}  // namespace fanyi
