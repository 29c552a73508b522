// Data-parallel training with the real fanyi-train binary: two ranks on
// 127.0.0.1 (Gloo on the CPU, NCCL on CUDA; rendezvous from MASTER_ADDR,
// MASTER_PORT, WORLD_SIZE and RANK) end with the weights of one process that
// sums the same two batches into each step, and their run resumes in one
// process; one command starts
// a rank per core by itself; ranks read one corpus prepared by
// fanyi-prepare; a rank that is killed makes the other exit non-zero within
// the collective timeout.
#include <gtest/gtest.h>
#include <signal.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/model/checkpoint.h"
#include "common/model/cpu_threading.h"
#include "tests/random_model.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"
#include "trainer/local_ranks.h"
#include "trainer/training_data.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// fanyi-train on the mini corpus with a tiny model and no dropout (so that
// every rank's arithmetic is the same whatever its random state), on
// `device`, plus `flags`, as a shell command line.
std::string TrainCommand(const std::string& out, const std::string& flags,
                         const std::string& device = "cpu") {
  return testing_util::BinaryPath("fanyi-train") + " --train " +
         testing_util::SharedDataPath("en-zh/train_mini.tsv") + " --dev " +
         testing_util::SharedDataPath("en-zh/dev_mini.tsv") +
         " --layers 1 --d_model 32 --d_ff 64 --heads 2 --dropout 0"
         " --threads 1 --average_last 0 --length_penalties 1,2"
         " --batch_tokens 512 --device " +
         device + " --out " + out + " " + flags;
}

std::string Rank(int rank, int port) {
  return "MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) +
         " WORLD_SIZE=2 RANK=" + std::to_string(rank) + " ";
}

// NCCL takes one rank a GPU: on a machine with one, each rank names another
// host to NCCL, which then joins them over sockets on the loopback as if
// they were two machines' (the same collectives, another transport).
std::string SharedGpu(int rank) {
  if (torch::cuda::device_count() >= 2) return "";
  return "NCCL_HOSTID=fanyi-test-rank" + std::to_string(rank) +
         " NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 ";
}

class TwoRanksTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TwoRanksTest, EqualOneProcessSummingTheirBatches) {
  const std::string device = GetParam();
  const std::string dir = testing_util::MakeTempDir("data_parallel_training");
  const int port = testing_util::FreePort();
  const std::string ranked = dir + "/ranked";  // Both ranks share it.
  auto rank_command = [&](int rank) {
    return Rank(rank, port) + (device == "cuda" ? SharedGpu(rank) : "") +
           TrainCommand(ranked, "--epochs 2", device) + " 2>&1";
  };
  auto rank1 = std::async(std::launch::async, [&] {
    return testing_util::RunCommand(rank_command(1));
  });
  const testing_util::CommandResult rank0 =
      testing_util::RunCommand(rank_command(0));
  ASSERT_EQ(rank0.exit_code, 0) << rank0.output;
  EXPECT_NE(
      rank0.output.find(device == "cuda" ? "(nccl, cuda:" : "(gloo, cpu)"),
      std::string::npos)
      << rank0.output;
  const testing_util::CommandResult rank1_result = rank1.get();
  ASSERT_EQ(rank1_result.exit_code, 0) << rank1_result.output;
  const std::string alone = dir + "/alone";
  const testing_util::CommandResult one = testing_util::RunCommand(
      TrainCommand(alone, "--epochs 2 --accumulate_batches 2", device) +
      " 2>&1");
  ASSERT_EQ(one.exit_code, 0) << one.output;

  const Checkpoint a = LoadCheckpoint(ranked + "/last", torch::kCPU);
  const Checkpoint b = LoadCheckpoint(alone + "/last", torch::kCPU);
  EXPECT_EQ(a.training.at("step"), b.training.at("step"));
  EXPECT_GT(a.training.at("step").get<int64_t>(), 10);
  const double largest =
      testing_util::LargestWeightDifference(a.model, b.model);
  std::cout << "largest weight difference " << largest << "\n";
  // The same sums in another order: equal to float rounding (on CUDA, whose
  // backward kernels add in no fixed order, to a little more).
  EXPECT_LT(largest, device == "cuda" ? 1e-4 : 1e-5);
  // Only rank 0 wrote: one log, one set of checkpoints.
  EXPECT_TRUE(fs::exists(ranked + "/best"));
  EXPECT_EQ(rank1_result.output.find("best dev BLEU"), std::string::npos);
  // Both ranks chose best/'s length penalty; rank 0 kept it.
  EXPECT_NE(rank0.output.find("length penalty on dev, beam 4: 1 -> "),
            std::string::npos)
      << rank0.output;
  const double chosen =
      LoadCheckpoint(ranked + "/best", torch::kCPU).length_penalty;
  EXPECT_TRUE(chosen == 1.0 || chosen == 2.0) << chosen;

  // The two-rank run resumes in one process (another world size): its
  // saves are per epoch, not per rank.
  const testing_util::CommandResult resumed = testing_util::RunCommand(
      TrainCommand(ranked, "--epochs 3 --resume", device) + " 2>&1");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const Checkpoint after = LoadCheckpoint(ranked + "/last", torch::kCPU);
  EXPECT_EQ(after.training.at("epoch"), 3);
  EXPECT_GT(after.training.at("step").get<int64_t>(),
            a.training.at("step").get<int64_t>());
}

INSTANTIATE_TEST_SUITE_P(Devices, TwoRanksTest,
                         ::testing::ValuesIn(testing_util::TestDevices()),
                         [](const auto& info) { return info.param; });

// Subword models: rank 0 trains them and hands them to rank 1, whose
// tokens must then match (or the gradients would be of other batches).
// By default one command starts a rank per core it is given (--threads 2:
// two ranks of one thread), splitting --batch_tokens between them: the same
// weights as two ranks started by hand, so as one process summing two
// half batches a step.
TEST(DataParallelTrainingTest, OneCommandStartsARankPerCore) {
  const std::string dir = testing_util::MakeTempDir("local_ranks");
  const testing_util::CommandResult ranked = testing_util::RunCommand(
      TrainCommand(dir + "/ranked", "--epochs 2 --threads 2") + " 2>&1");
  ASSERT_EQ(ranked.exit_code, 0) << ranked.output;
  EXPECT_NE(ranked.output.find("2 ranks of 1 thread(s), 256 tokens a batch"),
            std::string::npos)
      << ranked.output;
  EXPECT_NE(ranked.output.find("rank 0 of 2"), std::string::npos)
      << ranked.output;
  const testing_util::CommandResult one = testing_util::RunCommand(
      TrainCommand(dir + "/alone",
                   "--epochs 2 --accumulate_batches 2 --batch_tokens 256") +
      " 2>&1");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.output.find(" ranks of "), std::string::npos) << one.output;
  const Checkpoint a = LoadCheckpoint(dir + "/ranked/last", torch::kCPU);
  const Checkpoint b = LoadCheckpoint(dir + "/alone/last", torch::kCPU);
  EXPECT_EQ(a.training.at("step"), b.training.at("step"));
  auto expected = b.model->named_parameters();
  for (const auto& parameter : a.model->named_parameters()) {
    EXPECT_LT((parameter.value() - expected[parameter.key()])
                  .abs()
                  .max()
                  .item<double>(),
              1e-5)
        << parameter.key();
  }
}

// --threads 0 takes the cores the process is given: pinned to one core,
// the command trains alone, in one process.
TEST(DataParallelTrainingTest, OneCoreGivenTrainsInOneProcess) {
  const std::string out = testing_util::MakeTempDir("one_core") + "/run";
  const testing_util::CommandResult pinned = testing_util::RunCommand(
      "taskset -c 0 " + TrainCommand(out, "--epochs 1 --threads 0") + " 2>&1");
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  EXPECT_EQ(pinned.output.find(" ranks of "), std::string::npos)
      << pinned.output;
  EXPECT_TRUE(fs::exists(out + "/last"));
}

// How a command splits its cores and tokens among the ranks it starts.
TEST(LocalRankPlanTest, CoresAndTokensAreSplitAmongTheRanks) {
  const LocalRankPlan per_core = PlanLocalRanks(0, 4, 2048, "cpu");
  EXPECT_EQ(per_core.ranks, 4);
  EXPECT_EQ(per_core.threads, 1);
  EXPECT_EQ(per_core.batch_tokens, 512);
  const LocalRankPlan alone = PlanLocalRanks(1, 4, 2048, "cpu");
  EXPECT_EQ(alone.ranks, 1);
  EXPECT_EQ(alone.threads, 4);
  EXPECT_EQ(alone.batch_tokens, 2048);
  const LocalRankPlan pairs = PlanLocalRanks(2, 4, 2049, "cpu");
  EXPECT_EQ(pairs.ranks, 2);
  EXPECT_EQ(pairs.threads, 2);
  EXPECT_EQ(pairs.batch_tokens, 1024);
  // More ranks than cores: one thread each.
  EXPECT_EQ(PlanLocalRanks(3, 2, 2048, "cpu").threads, 1);
  // --threads 0: the cores this process is given.
  EXPECT_EQ(PlanLocalRanks(0, 0, 1 << 20, "cpu").ranks, CoresGiven());
  EXPECT_THROW(PlanLocalRanks(4, 4, 3, "cpu"), std::invalid_argument);
  EXPECT_THROW(PlanLocalRanks(2, 4, 2048, "cuda"), std::invalid_argument);
  EXPECT_THROW(PlanLocalRanks(-1, 4, 2048, "cpu"), std::invalid_argument);
}

// SIGTERM to the command stops every rank it started, leaving no scratch
// copy of the corpus behind, and --resume goes on from the last save.
TEST(DataParallelTrainingTest, SigtermStopsEveryRankAndTheRunResumes) {
  const std::string out =
      testing_util::MakeTempDir("local_ranks_stop") + "/run";
  const testing_util::CommandResult stopped = testing_util::RunCommand(
      TrainCommand(out, "--epochs 1000 --ranks 2") + " 2>" + out +
      ".log & pid=$!; for i in $(seq 600); do [ -d " + out +
      "/last ] && break; sleep 0.1; done; kill -TERM $pid; wait $pid;"
      " echo \"exit $?\"; sleep 1; left=none; for r in $(sed -n"
      " 's/.*process ids//p' " +
      out +
      ".log); do"
      " kill -0 $r 2>/dev/null && left=$r; done; echo \"left: $left\"");
  EXPECT_NE(stopped.output.find("exit 143"), std::string::npos)
      << stopped.output;
  EXPECT_NE(stopped.output.find("left: none"), std::string::npos)
      << stopped.output;
  // Rank 1 was stopped before it could remove its copy of the corpus; the
  // command removed it.
  const std::string log = ReadFile(out + ".log");
  const size_t ids = log.find("process ids");
  ASSERT_NE(ids, std::string::npos) << log;
  std::istringstream pids(log.substr(ids + std::string("process ids").size()));
  int64_t rank0_pid = 0, rank1_pid = 0;
  ASSERT_TRUE(pids >> rank0_pid >> rank1_pid) << log;
  EXPECT_FALSE(fs::exists(RankScratchDirectory(1, rank1_pid)))
      << RankScratchDirectory(1, rank1_pid) << " is left behind";
  const int64_t saved_epoch =
      LoadCheckpoint(out + "/last", torch::kCPU).training.at("epoch");
  const testing_util::CommandResult resumed = testing_util::RunCommand(
      TrainCommand(out, "--ranks 2 --resume --epochs " +
                            std::to_string(saved_epoch + 1)) +
      " 2>&1");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resumed from"), std::string::npos)
      << resumed.output;
  EXPECT_EQ(LoadCheckpoint(out + "/last", torch::kCPU).training.at("epoch"),
            saved_epoch + 1);
}

TEST(DataParallelTrainingTest, RanksShareRankZerosSubwordModels) {
  const std::string dir = testing_util::MakeTempDir("data_parallel_subwords");
  const int port = testing_util::FreePort();
  const std::string out = dir + "/run";
  const std::string flags =
      "--epochs 1 --source_subwords 300 --target_subwords 1500";
  auto rank1 = std::async(std::launch::async, [&] {
    return testing_util::RunCommand(Rank(1, port) + TrainCommand(out, flags) +
                                    " 2>&1");
  });
  const testing_util::CommandResult rank0 = testing_util::RunCommand(
      Rank(0, port) + TrainCommand(out, flags) + " 2>&1");
  ASSERT_EQ(rank0.exit_code, 0) << rank0.output;
  const testing_util::CommandResult rank1_result = rank1.get();
  ASSERT_EQ(rank1_result.exit_code, 0) << rank1_result.output;
  const Checkpoint checkpoint = LoadCheckpoint(out + "/last", torch::kCPU);
  ASSERT_NE(checkpoint.source_subwords, nullptr);
  ASSERT_NE(checkpoint.target_subwords, nullptr);
  // Both ranks built the same vocabularies from the same pieces.
  const auto vocabularies = [](const std::string& output) {
    const size_t at = output.find("vocabularies:");
    return output.substr(at, output.find('\n', at) - at);
  };
  EXPECT_EQ(vocabularies(rank0.output), vocabularies(rank1_result.output));
}

// A corpus prepared by the real fanyi-prepare: ranks that read the same
// one train; a rank given another is refused, and so the other stops too.
TEST(DataParallelTrainingTest, RanksReadOnePreparedCorpus) {
  const std::string dir = testing_util::MakeTempDir("data_parallel_prepared");
  auto prepare = [&](const std::string& train, const std::string& out) {
    const testing_util::CommandResult prepared = testing_util::RunCommand(
        testing_util::BinaryPath("fanyi-prepare") + " --train " +
        testing_util::SharedDataPath(train) + " --dev " +
        testing_util::SharedDataPath("en-zh/dev_mini.tsv") +
        " --threads 2 --shard_pairs 300 --out " + out + " 2>&1");
    EXPECT_EQ(prepared.exit_code, 0) << prepared.output;
  };
  prepare("en-zh/train_mini.tsv", dir + "/mini");
  prepare("en-zh/dev_mini.tsv", dir + "/other");
  // --data replaces --train and --dev.
  auto train = [&](int rank, int port, const std::string& data,
                   const std::string& out) {
    return testing_util::RunCommand(
        Rank(rank, port) + testing_util::BinaryPath("fanyi-train") +
        " --data " + data +
        " --layers 1 --d_model 32 --d_ff 64 --heads 2 --threads 1"
        " --device cpu --average_last 0 --length_penalties= --epochs 1"
        " --collective_timeout_minutes 0.5"
        " --out " +
        out + " 2>&1");
  };
  int port = testing_util::FreePort();
  auto same = std::async(std::launch::async, [&] {
    return train(1, port, dir + "/mini", dir + "/a");
  });
  const testing_util::CommandResult first =
      train(0, port, dir + "/mini", dir + "/a");
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(same.get().exit_code, 0);
  EXPECT_NE(first.output.find("1000 training pairs in 4 shards"),
            std::string::npos)
      << first.output;

  port = testing_util::FreePort();
  auto other = std::async(std::launch::async, [&] {
    return train(1, port, dir + "/other", dir + "/b");
  });
  const testing_util::CommandResult refused =
      train(0, port, dir + "/mini", dir + "/b");
  const testing_util::CommandResult other_result = other.get();
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(other_result.exit_code, 0) << other_result.output;
  EXPECT_NE(other_result.output.find("differs from rank 0's"),
            std::string::npos)
      << other_result.output;
}

TEST(DataParallelTrainingTest, AKilledRankMakesTheOtherExitInTime) {
  const std::string dir = testing_util::MakeTempDir("data_parallel_kill");
  const int port = testing_util::FreePort();
  const std::string out = dir + "/run";
  const std::string flags =
      "--epochs 10000 --validate_every 10000 --collective_timeout_minutes 0.5";
  // Rank 1 in the background; its process id in a file.
  const std::string pid_file = dir + "/rank1.pid";
  ASSERT_EQ(std::system(("sh -c 'exec env " + Rank(1, port) +
                         TrainCommand(out, flags) + " > " + dir +
                         "/rank1.log 2>&1' & echo $! > " + pid_file)
                            .c_str()),
            0);
  auto rank0 = std::async(std::launch::async, [&] {
    return testing_util::RunCommand(Rank(0, port) + TrainCommand(out, flags) +
                                    " 2>&1");
  });
  // Kill rank 1 once it trains (its log names the model), not before.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (ReadFile(dir + "/rank1.log").find("model:") == std::string::npos) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << ReadFile(dir + "/rank1.log");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const pid_t rank1 = std::stoi(ReadFile(pid_file));
  ASSERT_EQ(kill(rank1, SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(rank0.wait_for(std::chrono::minutes(2)), std::future_status::ready)
      << "rank 0 still runs 2 minutes after rank 1 was killed";
  const testing_util::CommandResult result = rank0.get();
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("a rank stopped?"), std::string::npos)
      << result.output;
  // Well within the 30 s collective timeout: the connection closed.
  EXPECT_LT(std::chrono::steady_clock::now() - killed,
            std::chrono::seconds(45));
  // A rank started by hand and killed leaves its copy of the corpus; no
  // command of ours started it to remove it.
  fs::remove_all(RankScratchDirectory(1, rank1));
}

}  // namespace
}  // namespace fanyi
