#include "server/http/fair_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fanyi {
namespace {

using Outcome = FairPool::Outcome;

// A gate tasks wait at until the test opens it.
class Gate {
 public:
  void Wait() const { open_.wait(); }
  void Open() { promise_.set_value(); }

 private:
  std::promise<void> promise_;
  std::shared_future<void> open_ = promise_.get_future().share();
};

// The order tasks ran in, by name.
class Log {
 public:
  void Add(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    names_.push_back(name);
  }
  std::vector<std::string> names() {
    std::lock_guard<std::mutex> lock(mutex_);
    return names_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> names_;  // Guarded by mutex_.
};

// The case the pool exists for: a client whose tasks are slow (held at a
// gate) takes at most half the threads, so another client's task runs at
// once; with one queue it would wait behind all of them.
TEST(FairPoolTest, ASlowClientLeavesAThreadToTheOthers) {
  FairPool pool(2, 64, 16);
  ASSERT_EQ(pool.max_client_running(), 1);
  Gate slow;
  std::atomic<int> slow_started{0};
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(pool.TryPost("10.0.0.66",
                           [&] {
                             ++slow_started;
                             slow.Wait();
                           }),
              Outcome::kTaken);
  }
  std::promise<void> honest_ran;
  ASSERT_EQ(pool.TryPost("10.0.0.1", [&] { honest_ran.set_value(); }),
            Outcome::kTaken);
  // Returns while every slow task is still held: no timing involved.
  honest_ran.get_future().wait();
  EXPECT_EQ(slow_started.load(), 1);
  slow.Open();
  pool.StopTaking();
  EXPECT_EQ(slow_started.load(), 8);
}

TEST(FairPoolTest, ClientsTakeTurnsOneTaskEach) {
  FairPool pool(1, 64, 16);
  Gate first;
  Log log;
  ASSERT_EQ(pool.TryPost("a", [&] {
    first.Wait();
    log.Add("a1");
  }),
            Outcome::kTaken);
  for (const std::string name : {"a2", "a3"}) {
    ASSERT_EQ(pool.TryPost("a", [&log, name] { log.Add(name); }),
              Outcome::kTaken);
  }
  for (const std::string name : {"b1", "b2"}) {
    ASSERT_EQ(pool.TryPost("b", [&log, name] { log.Add(name); }),
              Outcome::kTaken);
  }
  ASSERT_EQ(pool.TryPost("c", [&log] { log.Add("c1"); }), Outcome::kTaken);
  first.Open();
  pool.StopTaking();
  // a1 was running when the others came; then b and c before a's next, and
  // so on in turns.
  EXPECT_EQ(log.names(), (std::vector<std::string>{"a1", "b1", "c1", "a2",
                                                   "b2", "a3"}));
}

TEST(FairPoolTest, WaitingTasksAreBoundedPerClientAndInAll) {
  FairPool pool(1, 5, 3);
  Gate held;
  ASSERT_EQ(pool.TryPost("a", [&held] { held.Wait(); }), Outcome::kTaken);
  // The held task may still be waiting for the thread: count from there.
  Gate second;
  ASSERT_EQ(pool.TryPost("b", [&] { second.Wait(); }), Outcome::kTaken);
  int a_taken = 0;
  while (pool.TryPost("a", [] {}) == Outcome::kTaken) ++a_taken;
  EXPECT_LE(a_taken, 3);
  EXPECT_GE(a_taken, 2);
  EXPECT_EQ(pool.TryPost("a", [] {}), Outcome::kClientFull);
  // Another client still gets in, up to the bound in all.
  int c_taken = 0;
  Outcome last = Outcome::kTaken;
  while ((last = pool.TryPost("c", [] {})) == Outcome::kTaken) ++c_taken;
  EXPECT_EQ(last, Outcome::kFull);
  EXPECT_GE(c_taken, 1);
  held.Open();
  second.Open();
  pool.StopTaking();
}

TEST(FairPoolTest, StopTakingWaitsForWhatItTookAndRefusesTheRest) {
  std::atomic<int> ran{0};
  FairPool pool(2, 64, 16);
  Gate gate;
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(pool.TryPost(i % 2 ? "a" : "b",
                           [&] {
                             gate.Wait();
                             ++ran;
                           }),
              Outcome::kTaken);
  }
  std::thread opener([&gate] { gate.Open(); });
  pool.StopTaking();
  EXPECT_EQ(ran.load(), 10);
  EXPECT_EQ(pool.TryPost("a", [] {}), Outcome::kStopped);
  opener.join();
}

TEST(FairPoolTest, ATaskThatThrowsLeavesThePoolWorking) {
  FairPool pool(1, 64, 16);
  std::atomic<bool> ran{false};
  ASSERT_EQ(pool.TryPost("a", [] { throw std::runtime_error("bad body"); }),
            Outcome::kTaken);
  ASSERT_EQ(pool.TryPost("a", [&ran] { ran = true; }), Outcome::kTaken);
  pool.StopTaking();
  EXPECT_TRUE(ran.load());
}

TEST(FairPoolTest, RefusesNoThreadsOrNoRoom) {
  EXPECT_THROW(FairPool(0, 64, 16), std::invalid_argument);
  EXPECT_THROW(FairPool(2, 0, 16), std::invalid_argument);
  EXPECT_THROW(FairPool(2, 64, 0), std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
