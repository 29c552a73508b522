// The model registry and repository under threads, without a gRPC server
// (so that ThreadSanitizer, which cannot see into Debian's gRPC, runs it):
// clients choose the model and decode on the version they chose while a
// poller loads new versions, rolls one back, and retires the old ones, and
// a health reader looks at every served model as the server's health does.
#include "server/model_registry.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fanyi/v1/translator.pb.h"
#include "server/model_repository.h"
#include "server/served_model.h"
#include "server/server_metrics.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

// What the clients saw: answers by the version that gave them.
struct Seen {
  std::atomic<int> failures{0};
  std::atomic<int> by_version[4] = {};
  std::atomic<int> health_reads{0};
};

// Chooses en-zh and decodes `source` on the chosen version until `stop`.
void Client(const ModelRegistry& registry, const EncodedSource& source,
            const std::atomic<bool>& stop, Seen& seen) {
  v1::ModelChoice choice;
  choice.set_model("en-zh");
  while (!stop.load()) {
    std::shared_ptr<ServedModel> model;
    if (!registry.Choose(choice, &model).ok()) {
      ++seen.failures;
      continue;
    }
    std::promise<grpc::Status> done;
    model->batcher().Submit(
        source, std::chrono::system_clock::now() + std::chrono::seconds(60),
        nullptr, [&done](const grpc::Status& status, DecodedPart) {
          done.set_value(status);
        });
    if (!done.get_future().get().ok()) {
      ++seen.failures;
      continue;
    }
    ++seen.by_version[model->version()];
  }
}

TEST(ModelRegistryTest, ClientsDecodeWhileVersionsComeAndGo) {
  const std::string checkpoint =
      testing_util::TrainTinyModel(testing_util::MakeTempDir("registry_model"));
  const std::string repository =
      testing_util::MakeTempDir("registry_repository") + "/models";
  testing_util::AddModelVersion(repository, "en-zh", 1, checkpoint);

  prometheus::Registry prometheus;
  ServerMetrics metrics(prometheus);
  ModelRegistry registry;
  ModelSettings settings;
  settings.translator.device = "cpu";
  settings.translator.threads = 1;
  settings.workers = 2;
  std::mutex log_mutex;
  std::vector<std::string> log;  // Guarded by log_mutex.
  Seen seen;
  // As the server's health update does, on the poller's and the workers'
  // threads.
  auto read_health = [&registry, &seen] {
    for (const std::shared_ptr<ServedModel>& model : registry.Models()) {
      seen.health_reads += model->Serving() ? 1 : 0;
    }
  };
  auto repository_log = [&log_mutex, &log](const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mutex);
    log.push_back(line);
  };
  {
    // Polled by hand, from a thread of its own, every millisecond.
    ModelRepository models(repository, settings, std::chrono::milliseconds(0),
                           registry, metrics, read_health, repository_log);
    std::shared_ptr<ServedModel> first;
    v1::ModelChoice choice;
    ASSERT_TRUE(registry.Choose(choice, &first).ok());
    const EncodedSource source =
        first->translator().pipeline().EncodeSentence("Thank you very much.");
    first.reset();

    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&] { Client(registry, source, stop, seen); });
    }
    threads.emplace_back([&] {
      while (!stop.load()) {
        models.Poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    threads.emplace_back([&] {
      while (!stop.load()) read_health();
    });
    // Waits until clients have had `count` answers from `version`.
    auto await_answers = [&seen](int version, int count) {
      const auto give_up =
          std::chrono::steady_clock::now() + std::chrono::seconds(120);
      while (seen.by_version[version].load() < count &&
             std::chrono::steady_clock::now() < give_up) {
        std::this_thread::yield();
      }
      return seen.by_version[version].load() >= count;
    };
    EXPECT_TRUE(await_answers(1, 20));
    testing_util::AddModelVersion(repository, "en-zh", 2, checkpoint);
    EXPECT_TRUE(await_answers(2, 20));
    // Rolled back: version 1 loaded again.
    fs::remove_all(fs::path(repository) / "en-zh" / "2");
    const int version_1 = seen.by_version[1].load();
    EXPECT_TRUE(await_answers(1, version_1 + 20));
    testing_util::AddModelVersion(repository, "en-zh", 3, checkpoint);
    EXPECT_TRUE(await_answers(3, 20));
    stop = true;
    for (std::thread& thread : threads) thread.join();
  }
  EXPECT_EQ(seen.failures.load(), 0);
  EXPECT_GT(seen.health_reads.load(), 0);
  std::lock_guard<std::mutex> lock(log_mutex);
  int unloaded = 0;
  for (const std::string& line : log) {
    unloaded += line.find(" unloaded") != std::string::npos;
  }
  // Versions 1, 2 and the reloaded 1 retired (the last maybe at the end).
  EXPECT_GE(unloaded, 2);
}

}  // namespace
}  // namespace fanyi
