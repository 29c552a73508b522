// Faults against the real binaries: SIGTERM while requests are in flight to
// fanyi-server, corrupt checkpoints given to fanyi-server, and fanyi-train
// killed with SIGKILL mid-run and resumed.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/model/checkpoint.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "tests/server_process.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"
#include "trainer/trainer.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;
using testing_util::BinaryPath;
using testing_util::CommandResult;
using testing_util::MetricValue;
using testing_util::RunCommand;
using testing_util::ServerProcess;
using testing_util::StatusCodeName;
using testing_util::TranslateAt;
using testing_util::WaitForMetric;

const std::string& TinyModelDir() {
  static const auto* directory = new std::string(testing_util::TrainTinyModel(
      testing_util::MakeTempDir("fault_test_model")));
  return *directory;
}

// SIGTERM while requests are accepted and waiting: the server decodes and
// answers every one of them, refuses what comes after with UNAVAILABLE and
// exits 0.
TEST(FaultTest, SigtermAnswersAcceptedRequestsRefusesNewOnesAndExitsZero) {
  // Accepted requests wait for a full batch of 256 rows (64 texts of the
  // default beam, 4) for ten minutes: only the shutdown's drain can get them
  // decoded.
  ServerProcess server({"--model_dir=" + TinyModelDir(), "--max_batch_size=256",
                        "--max_batch_delay_ms=600000"});
  const std::vector<std::string> texts = {
      "hello", "I like tea.", "Where is the station?", "Thank you very much."};
  constexpr int kAccepted = 48;  // One client (channel, thread) each.
  std::vector<grpc::Status> accepted_statuses(kAccepted);
  std::vector<v1::TranslateResponse> accepted_responses(kAccepted);
  std::vector<std::thread> accepted_clients;
  for (int i = 0; i < kAccepted; ++i) {
    accepted_clients.emplace_back([&, i] {
      accepted_statuses[i] = TranslateAt(
          server.address(), texts[i % texts.size()], &accepted_responses[i]);
    });
  }
  // Accepted means queued in the server: a state, polled (for a minute at
  // most, so that a server that decodes them early fails the test here).
  const double queued = MetricValue(
      WaitForMetric(server.metrics_port(), "fanyi_queue_depth{model=\"en-zh\"}",
                    kAccepted, std::chrono::seconds(60)),
      "fanyi_queue_depth{model=\"en-zh\"}");
  if (queued < kAccepted) {
    ADD_FAILURE() << "only " << queued << " of " << kAccepted
                  << " requests ever queued together";
    std::_Exit(1);  // Client threads still hold this frame's vectors.
  }

  server.Signal(SIGTERM);
  // Late clients keep sending until they are refused, and once more after.
  constexpr int kLateClients = 8;
  std::mutex mutex;
  std::map<std::string, int> late_counts;  // Guarded by mutex: by code.
  std::vector<std::string> late_failures;  // Guarded by mutex.
  std::vector<std::thread> late_clients;
  for (int c = 0; c < kLateClients; ++c) {
    late_clients.emplace_back([&] {
      bool refused = false;
      for (int sent = 0; sent < 1000; ++sent) {
        v1::TranslateResponse response;
        const grpc::Status status =
            TranslateAt(server.address(), "hello", &response);
        std::lock_guard<std::mutex> lock(mutex);
        ++late_counts[StatusCodeName(status.error_code())];
        if (!status.ok() &&
            status.error_code() != grpc::StatusCode::UNAVAILABLE) {
          late_failures.push_back(StatusCodeName(status.error_code()) + ": " +
                                  status.error_message());
        }
        if (refused) return;
        refused = !status.ok();
      }
      late_failures.push_back("a late client was never refused");
    });
  }
  for (std::thread& client : accepted_clients) client.join();
  for (std::thread& client : late_clients) client.join();
  const int exit_status = server.Wait();
  const std::string output = server.RemainingOutput();

  int accepted_ok = 0;
  for (int i = 0; i < kAccepted; ++i) {
    EXPECT_TRUE(accepted_statuses[i].ok())
        << i << ": " << StatusCodeName(accepted_statuses[i].error_code())
        << ": " << accepted_statuses[i].error_message();
    if (accepted_statuses[i].ok()) {
      ++accepted_ok;
      EXPECT_FALSE(accepted_responses[i].translation().text().empty());
    }
  }
  std::cout << "accepted before SIGTERM: " << accepted_ok << "/" << kAccepted
            << " OK; late requests:";
  for (const auto& [code, count] : late_counts) {
    std::cout << " " << code << " " << count;
  }
  std::cout << std::endl;
  EXPECT_TRUE(late_failures.empty()) << late_failures.front();
  EXPECT_GE(late_counts["UNAVAILABLE"], kLateClients);
  ASSERT_TRUE(WIFEXITED(exit_status)) << "fanyi-server died abnormally";
  EXPECT_EQ(WEXITSTATUS(exit_status), 0);
  EXPECT_NE(output.find("draining"), std::string::npos) << output;
}

// Damage done to a copy of a good checkpoint, and the file the server's
// error must name.
struct Damage {
  std::string name;
  std::string file;  // Damaged file, relative to the checkpoint directory.
  void (*apply)(const fs::path& file);
};

void Truncate(const fs::path& file) {
  fs::resize_file(file, fs::file_size(file) / 2);
}

void SetFormatVersion99(const fs::path& file) {
  std::ifstream in(file);
  nlohmann::json config = nlohmann::json::parse(in);
  in.close();
  config["format_version"] = 99;
  std::ofstream(file) << config.dump(2);
}

void Remove(const fs::path& file) { fs::remove(file); }

void WriteGarbage(const fs::path& file) {
  std::ofstream(file) << "{\"format\": \"fanyi-checkpoint\", ";
}

TEST(FaultTest, CorruptCheckpointsMakeTheServerBinaryExitNamingTheFile) {
  const std::vector<Damage> damages = {
      {"truncated weights", "model.pt", Truncate},
      {"empty weights", "model.pt",
       [](const fs::path& file) { fs::resize_file(file, 0); }},
      {"wrong format_version", "config.json", SetFormatVersion99},
      {"config not JSON", "config.json", WriteGarbage},
      {"missing source vocabulary", "src_vocab.json", Remove},
      {"truncated target vocabulary", "tgt_vocab.json", Truncate},
  };
  const std::string parent = testing_util::MakeTempDir("fault_test_damaged");
  int index = 0;
  for (const Damage& damage : damages) {
    const fs::path copy =
        fs::path(parent) / ("model" + std::to_string(index++));
    fs::copy(TinyModelDir(), copy, fs::copy_options::recursive);
    damage.apply(copy / damage.file);
    const CommandResult result = RunCommand(
        BinaryPath("fanyi-server") + " --model_dir=" + copy.string() +
        " --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0"
        " --http_listen=127.0.0.1:0 --threads=1"
        " --device=cpu 2>&1");
    std::cout << damage.name << ": exit " << result.exit_code << ": "
              << result.output;
    EXPECT_EQ(result.exit_code, 1) << damage.name << ": " << result.output;
    EXPECT_NE(result.output.find((copy / damage.file).string()),
              std::string::npos)
        << damage.name << ": " << result.output;
  }
}

// --- fanyi-train killed with SIGKILL ---

constexpr int kTrainEpochs = 6;

// A fanyi-train process with a tiny deterministic configuration (no
// dropout, one thread) writing to `out_dir`; stdout and stderr go to
// `log_path`.
pid_t StartTrainer(const std::string& train, const std::string& dev,
                   const std::string& out_dir, bool resume,
                   const std::string& log_path) {
  const std::string binary = BinaryPath("fanyi-train");
  std::vector<std::string> arguments = {
      binary,
      "--train=" + train,
      "--dev=" + dev,
      "--out=" + out_dir,
      "--layers=1",
      "--d_model=16",
      "--d_ff=16",
      "--heads=2",
      "--max_positions=64",
      "--dropout=0",
      "--batch_tokens=512",
      "--epochs=" + std::to_string(kTrainEpochs),
      "--threads=1",
      "--device=cpu",
      resume ? "--resume" : "--noresume"};
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    close(log);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The "training" section of a checkpoint's config.json; null when it cannot
// be read (absent, or being replaced right now).
nlohmann::json TrainingInfo(const fs::path& checkpoint) {
  std::ifstream in(checkpoint / "config.json");
  if (!in) return nullptr;
  try {
    return nlohmann::json::parse(in).at("training");
  } catch (const std::exception&) {
    return nullptr;
  }
}

// The JSON records of train_log.jsonl from line `first_line` on.
std::vector<nlohmann::json> LogRecords(const fs::path& log, size_t first_line) {
  std::ifstream in(log);
  std::vector<nlohmann::json> records;
  size_t line_number = 0;
  for (std::string line; std::getline(in, line); ++line_number) {
    if (line_number < first_line) continue;
    records.push_back(nlohmann::json::parse(line));  // Throws on a torn line.
  }
  return records;
}

size_t LineCount(const fs::path& path) {
  const std::string text = ReadFile(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Every checkpoint directory that is there loads; returns the step of last/.
int64_t CheckCheckpointsLoad(const fs::path& out_dir) {
  for (const char* name : {"best", "last"}) {
    const fs::path directory = out_dir / name;
    if (!fs::exists(directory)) continue;
    EXPECT_NO_THROW(LoadCheckpoint(directory.string(), torch::kCPU))
        << directory;
  }
  EXPECT_TRUE(fs::exists(out_dir / "last")) << "no last/ after a checkpoint";
  // What the server serves from a training directory is best/, never a
  // staging directory left by the kill.
  EXPECT_EQ(ResolveCheckpointDirectory(out_dir.string()),
            (out_dir / "best").string());
  const nlohmann::json info = TrainingInfo(out_dir / "last");
  return info.is_null() ? -1 : info.at("step").get<int64_t>();
}

void ExpectSameWeights(const fs::path& a, const fs::path& b) {
  const Checkpoint first = LoadCheckpoint(a.string(), torch::kCPU);
  const Checkpoint second = LoadCheckpoint(b.string(), torch::kCPU);
  auto second_parameters = second.model->named_parameters();
  for (const auto& parameter : first.model->named_parameters()) {
    const torch::Tensor* other = second_parameters.find(parameter.key());
    ASSERT_NE(other, nullptr) << parameter.key();
    EXPECT_TRUE(torch::allclose(parameter.value(), *other, 1e-5, 1e-7))
        << parameter.key() << " differs: max difference "
        << (parameter.value() - *other).abs().max().item<float>();
  }
}

TEST(FaultTest, TrainerKilledMidRunResumesFromTheLastCompleteCheckpoint) {
  const fs::path work = testing_util::MakeTempDir("fault_test_trainer");
  const std::string train =
      testing_util::SharedDataPath("en-zh/train_mini.tsv");
  // A small dev set keeps validation (and so each epoch) short.
  const std::string dev = (work / "dev.tsv").string();
  {
    std::ifstream in(testing_util::SharedDataPath("en-zh/dev_mini.tsv"));
    std::ofstream out(dev);
    std::string line;
    for (int i = 0; i < 20 && std::getline(in, line); ++i) out << line << "\n";
  }

  // The same run without interruption, alongside, as the reference.
  const fs::path reference = work / "reference";
  const pid_t reference_pid = StartTrainer(
      train, dev, reference.string(), false, (work / "reference.log").string());

  const fs::path out = work / "killed";
  const fs::path train_log = out / "train_log.jsonl";
  std::random_device random_device;
  const unsigned seed = random_device();
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(0, 600);
  std::cout << "kill delays seeded with " << seed << std::endl;

  int64_t checkpoint_step = 0;  // Step of last/ when the run started.
  bool finished = false;        // A run ended on its own after all epochs.
  for (int kill_round = 0; kill_round < 3; ++kill_round) {
    const bool resume = kill_round > 0;
    // The last kill landed after the final epoch's checkpoint: no further
    // checkpoint can come, and the resume below has nothing to train.
    if (resume) {
      const nlohmann::json saved = TrainingInfo(out / "last");
      if (!saved.is_null() && saved.at("epoch") == kTrainEpochs) break;
    }
    const size_t log_start = resume ? LineCount(train_log) : 0;
    const fs::path run_log =
        work / ("run" + std::to_string(kill_round) + ".log");
    const pid_t pid =
        StartTrainer(train, dev, out.string(), resume, run_log.string());
    // Wait for a checkpoint newer than the one this run started from (or for
    // the run to end), then kill it a random moment later.
    int status = 0;
    bool exited = false;
    while (true) {
      // Reap first, so that a run which has ended is judged by its final
      // checkpoint.
      exited = waitpid(pid, &status, WNOHANG) == pid;
      const nlohmann::json info = TrainingInfo(out / "last");
      if (!info.is_null() && info.at("step").get<int64_t>() > checkpoint_step) {
        break;
      }
      ASSERT_FALSE(exited) << "fanyi-train ended without a new checkpoint:\n"
                           << ReadFile(run_log);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const int delay = delay_ms(random);
    if (!exited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    const std::string output = ReadFile(run_log);

    if (resume) {
      // It resumed from the complete checkpoint, not from a stray .tmp.
      EXPECT_NE(
          output.find("resumed from " + (out / "last").string() + " at epoch"),
          std::string::npos)
          << output;
      EXPECT_NE(output.find(", step " + std::to_string(checkpoint_step) + "\n"),
                std::string::npos)
          << "expected to resume at step " << checkpoint_step << ":\n"
          << output;
      // Its first progress record continues the step count.
      const std::vector<nlohmann::json> records =
          LogRecords(train_log, log_start);
      ASSERT_FALSE(records.empty());
      EXPECT_GT(records.front().at("step").get<int64_t>(), checkpoint_step);
      EXPECT_LE(records.front().at("step").get<int64_t>(),
                checkpoint_step + 10);
    }
    const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    // On a fast machine the run may finish all epochs before the kill lands;
    // then it must have ended cleanly.
    if (!killed) {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << ReadFile(run_log);
      finished = true;
    }
    std::cout << "round " << kill_round << ": killed " << delay
              << " ms after a checkpoint; last/ now at step ";
    checkpoint_step = CheckCheckpointsLoad(out);
    std::cout << checkpoint_step << (killed ? "" : " (had already ended)")
              << "; directories:";
    for (const auto& entry : fs::directory_iterator(out)) {
      std::cout << " " << entry.path().filename().string();
    }
    std::cout << std::endl;
    ASSERT_GT(checkpoint_step, 0);
    if (finished) break;
  }

  // A kill after the last epoch's checkpoint (during the final averaging or
  // dev pass) leaves nothing to train either.
  const nlohmann::json killed_info = TrainingInfo(out / "last");
  const bool all_epochs_saved =
      !killed_info.is_null() && killed_info.at("epoch") == kTrainEpochs;

  // Resume to the end.
  const size_t log_start = LineCount(train_log);
  const fs::path final_log = work / "final.log";
  const pid_t final_pid =
      StartTrainer(train, dev, out.string(), true, final_log.string());
  int final_status = 0;
  waitpid(final_pid, &final_status, 0);
  ASSERT_TRUE(WIFEXITED(final_status) && WEXITSTATUS(final_status) == 0)
      << ReadFile(final_log);
  int reference_status = 0;
  waitpid(reference_pid, &reference_status, 0);
  ASSERT_TRUE(WIFEXITED(reference_status) && WEXITSTATUS(reference_status) == 0)
      << ReadFile(work / "reference.log");

  const std::vector<nlohmann::json> records = LogRecords(train_log, log_start);
  if (finished || all_epochs_saved) {
    // Resuming a finished run trains nothing more.
    EXPECT_TRUE(records.empty()) << records.size() << " new log records";
  } else {
    ASSERT_FALSE(records.empty());
    EXPECT_GT(records.front().at("step").get<int64_t>(), checkpoint_step);
  }
  const nlohmann::json final_info = TrainingInfo(out / "last");
  const nlohmann::json reference_info = TrainingInfo(reference / "last");
  ASSERT_FALSE(final_info.is_null());
  ASSERT_FALSE(reference_info.is_null());
  EXPECT_EQ(final_info.at("epoch"), kTrainEpochs);
  // Step count and weights equal an uninterrupted run's: the step counter
  // and the optimizer's moments were restored, not restarted.
  EXPECT_EQ(final_info.at("step"), reference_info.at("step"));
  ExpectSameWeights(out / "last", reference / "last");
  CheckCheckpointsLoad(out);
}

}  // namespace
}  // namespace fanyi
