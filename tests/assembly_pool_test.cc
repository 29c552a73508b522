#include "server/assembly_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace fanyi {
namespace {

TEST(AssemblyPoolTest, RunsEveryTaskOffTheCallersThread) {
  std::mutex mutex;
  std::vector<std::thread::id> ran_on;  // Guarded by mutex.
  {
    AssemblyPool pool(2);
    for (int i = 0; i < 100; ++i) {
      pool.Post([&] {
        std::lock_guard<std::mutex> lock(mutex);
        ran_on.push_back(std::this_thread::get_id());
      });
    }
    pool.Drain();
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_EQ(ran_on.size(), 100u);
  }
  for (const std::thread::id& id : ran_on) {
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST(AssemblyPoolTest, DrainWaitsForTheTaskThatIsRunning) {
  AssemblyPool pool(1);
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<bool> finished{false};
  pool.Post([open, &finished] {
    open.wait();
    finished = true;
  });
  std::thread opener([&gate] { gate.set_value(); });
  pool.Drain();
  EXPECT_TRUE(finished.load());
  opener.join();
}

TEST(AssemblyPoolTest, DestructionRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  {
    AssemblyPool pool(1);
    pool.Post([open] { open.wait(); });  // Holds the one thread.
    for (int i = 0; i < 10; ++i) pool.Post([&ran] { ++ran; });
    gate.set_value();
  }
  EXPECT_EQ(ran.load(), 10);
}

TEST(AssemblyPoolTest, ATaskThatThrowsLeavesThePoolWorking) {
  AssemblyPool pool(1);
  std::atomic<bool> ran{false};
  pool.Post([] { throw std::runtime_error("assembly failed"); });
  pool.Post([&ran] { ran = true; });
  pool.Drain();
  EXPECT_TRUE(ran.load());
}

TEST(AssemblyPoolTest, RefusesNoThreads) {
  EXPECT_THROW(AssemblyPool(0), std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
