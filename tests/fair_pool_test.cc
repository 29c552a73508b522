#include "server/http/fair_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fanyi {
namespace {

using Outcome = FairPool::Outcome;

// Bounds a wait that only a broken pool makes long, so that the test
// fails instead of hanging.
constexpr std::chrono::seconds kGuard{60};

// A gate tasks wait at until the test opens it; it also tells when the
// first task reached it.
class Gate {
 public:
  void Wait() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!reached_) {
        reached_ = true;
        reached_promise_.set_value();
      }
    }
    open_.wait();
  }
  // Opens the gate; again, does nothing.
  void Open() {
    std::call_once(opened_, [this] { promise_.set_value(); });
  }
  // True once a task waits at the gate (within kGuard).
  bool Reached() {
    return reached_future_.wait_for(kGuard) == std::future_status::ready;
  }

 private:
  std::once_flag opened_;
  std::promise<void> promise_;
  std::shared_future<void> open_ = promise_.get_future().share();
  std::mutex mutex_;
  bool reached_ = false;  // Guarded by mutex_.
  std::promise<void> reached_promise_;
  std::future<void> reached_future_ = reached_promise_.get_future();
};

// Opens a gate when it goes out of scope: declared after the pool, so that
// a test that stops early (a failed ASSERT) opens the gate before the pool's
// destructor waits for the tasks held at it, and fails instead of hanging.
class OpenOnExit {
 public:
  explicit OpenOnExit(Gate& gate) : gate_(gate) {}
  ~OpenOnExit() { gate_.Open(); }
  OpenOnExit(const OpenOnExit&) = delete;
  OpenOnExit& operator=(const OpenOnExit&) = delete;

 private:
  Gate& gate_;
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

const auto kNoRefusal = [] { FAIL() << "refused"; };

// The case the pool exists for: a client whose tasks are slow (held at a
// gate) runs one at a time, so another client's task runs at once; with
// one queue it would wait behind all of them.
TEST(FairPoolTest, ASlowClientLeavesTheOtherThreadsToOthers) {
  Gate slow;
  std::atomic<int> slow_started{0};
  std::promise<void> honest_ran;
  FairPool pool(2, 64, 16, 1);
  OpenOnExit opens_slow(slow);
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(pool.TryPost(
                  "10.0.0.66",
                  [&] {
                    ++slow_started;
                    slow.Wait();
                  },
                  kNoRefusal),
              Outcome::kTaken);
  }
  ASSERT_TRUE(slow.Reached());
  ASSERT_EQ(pool.TryPost(
                "10.0.0.1", [&] { honest_ran.set_value(); }, kNoRefusal),
            Outcome::kTaken);
  // Ready while every slow task is still held: no timing involved.
  EXPECT_EQ(honest_ran.get_future().wait_for(kGuard),
            std::future_status::ready);
  EXPECT_EQ(slow_started.load(), 1);
  slow.Open();
  pool.StopTaking();
  EXPECT_EQ(slow_started.load(), 8);
}

TEST(FairPoolTest, ClientsTakeTurnsOneTaskEach) {
  Gate first;
  Log log;
  FairPool pool(1, 64, 16, 1);
  OpenOnExit opens_first(first);
  ASSERT_EQ(pool.TryPost(
                "a",
                [&] {
                  first.Wait();
                  log.Add("a1");
                },
                kNoRefusal),
            Outcome::kTaken);
  for (const std::string name : {"a2", "a3"}) {
    ASSERT_EQ(pool.TryPost(
                  "a", [&log, name] { log.Add(name); }, kNoRefusal),
              Outcome::kTaken);
  }
  for (const std::string name : {"b1", "b2"}) {
    ASSERT_EQ(pool.TryPost(
                  "b", [&log, name] { log.Add(name); }, kNoRefusal),
              Outcome::kTaken);
  }
  ASSERT_EQ(pool.TryPost(
                "c", [&log] { log.Add("c1"); }, kNoRefusal),
            Outcome::kTaken);
  first.Open();
  pool.StopTaking();
  // a1 came first; then b and c before a's next, and so on in turns.
  EXPECT_EQ(log.names(),
            (std::vector<std::string>{"a1", "b1", "c1", "a2", "b2", "a3"}));
}

TEST(FairPoolTest, WaitingTasksAreBoundedPerClient) {
  Gate held;
  FairPool pool(1, 64, 3, 1);
  OpenOnExit opens_held(held);
  ASSERT_EQ(pool.TryPost(
                "a", [&held] { held.Wait(); }, kNoRefusal),
            Outcome::kTaken);
  ASSERT_TRUE(held.Reached());
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(pool.TryPost(
                  "a", [] {}, kNoRefusal),
              Outcome::kTaken);
  }
  EXPECT_EQ(pool.TryPost(
                "a", [] {}, kNoRefusal),
            Outcome::kClientFull);
  EXPECT_EQ(pool.TryPost(
                "b", [] {}, kNoRefusal),
            Outcome::kTaken);
  held.Open();
  pool.StopTaking();
}

// When all the room is taken, a client with a shorter queue pushes out the
// newest task of the longest, down to one more than its own.
TEST(FairPoolTest, AFullPoolMakesRoomFromTheLongestQueue) {
  Gate held;
  Log log;
  FairPool pool(1, 4, 4, 1);
  OpenOnExit opens_held(held);
  ASSERT_EQ(pool.TryPost(
                "a", [&held] { held.Wait(); }, kNoRefusal),
            Outcome::kTaken);
  ASSERT_TRUE(held.Reached());
  for (const std::string name : {"a1", "a2", "a3", "a4"}) {
    ASSERT_EQ(pool.TryPost(
                  "a", [&log, name] { log.Add(name); },
                  [&log, name] { log.Add("refused " + name); }),
              Outcome::kTaken);
  }
  for (const std::string name : {"b1", "b2"}) {
    ASSERT_EQ(pool.TryPost(
                  "b", [&log, name] { log.Add(name); }, kNoRefusal),
              Outcome::kTaken);
  }
  // a has 2 waiting, b 2: b's third would leave a no longer queue. Then b,
  // listed while a ran, goes first.
  EXPECT_EQ(pool.TryPost(
                "b", [] {}, kNoRefusal),
            Outcome::kFull);
  EXPECT_EQ(log.names(),
            (std::vector<std::string>{"refused a4", "refused a3"}));
  held.Open();
  pool.StopTaking();
  EXPECT_EQ(log.names(), (std::vector<std::string>{"refused a4", "refused a3",
                                                   "b1", "a1", "b2", "a2"}));
}

// Large tasks run one at a time (max_large_running 1), and a client whose
// next task is large waits without a thread: with a's large task held and
// one thread free, b's large task (posted first) waits while c's small one
// runs; b's runs once a's ends. With one free thread this is an order, not
// a race: a pool that ran b would have run it before c.
TEST(FairPoolTest, LargeTasksRunOneAtATimeAndSmallOnesPassThem) {
  Gate held;
  Log log;
  std::atomic<bool> b_started{false};
  std::atomic<bool> b_had_started_when_c_ran{true};
  std::promise<void> c_ran;
  std::promise<void> a_ran;
  FairPool pool(2, 64, 16, 1);
  OpenOnExit opens_held(held);
  ASSERT_EQ(pool.TryPost(
                "a",
                [&] {
                  held.Wait();
                  log.Add("a");
                  a_ran.set_value();
                },
                kNoRefusal, /*large=*/true),
            Outcome::kTaken);
  ASSERT_TRUE(held.Reached());
  ASSERT_EQ(pool.TryPost(
                "b",
                [&] {
                  b_started = true;
                  log.Add("b");
                },
                kNoRefusal, /*large=*/true),
            Outcome::kTaken);
  ASSERT_EQ(pool.TryPost(
                "c",
                [&] {
                  b_had_started_when_c_ran = b_started.load();
                  log.Add("c");
                  c_ran.set_value();
                },
                kNoRefusal),
            Outcome::kTaken);
  ASSERT_EQ(c_ran.get_future().wait_for(kGuard), std::future_status::ready);
  EXPECT_FALSE(b_had_started_when_c_ran.load());
  held.Open();
  // StopTaking lets large tasks run on every thread, so a must have ended
  // first for b's place after it to be the pool's doing.
  ASSERT_EQ(a_ran.get_future().wait_for(kGuard), std::future_status::ready);
  pool.StopTaking();
  EXPECT_EQ(log.names(), (std::vector<std::string>{"c", "a", "b"}));
}

// Large tasks may take half the waiting places: past that a large task is
// refused (kLargeFull) while small ones are still taken.
TEST(FairPoolTest, LargeTasksTakeHalfTheWaitingRoomAtMost) {
  Gate held;
  FairPool pool(1, 4, 4, 1);
  OpenOnExit opens_held(held);
  ASSERT_EQ(pool.TryPost(
                "a", [&held] { held.Wait(); }, kNoRefusal, /*large=*/true),
            Outcome::kTaken);
  ASSERT_TRUE(held.Reached());
  EXPECT_EQ(pool.TryPost(
                "b", [] {}, kNoRefusal, /*large=*/true),
            Outcome::kTaken);
  EXPECT_EQ(pool.TryPost(
                "c", [] {}, kNoRefusal, /*large=*/true),
            Outcome::kTaken);
  EXPECT_EQ(pool.TryPost(
                "d", [] {}, kNoRefusal, /*large=*/true),
            Outcome::kLargeFull);
  EXPECT_EQ(pool.TryPost(
                "d", [] {}, kNoRefusal),
            Outcome::kTaken);
  held.Open();
  pool.StopTaking();
}

// Once the pool stops taking, large tasks no longer wait for one another:
// with a's held, b's runs on the free thread, so that a shutdown drains the
// queue on every thread.
TEST(FairPoolTest, StoppingLetsLargeTasksRunOnEveryThread) {
  Gate held;
  std::promise<void> b_ran;
  FairPool pool(2, 64, 16, 1);
  OpenOnExit opens_held(held);
  ASSERT_EQ(pool.TryPost(
                "a", [&held] { held.Wait(); }, kNoRefusal, /*large=*/true),
            Outcome::kTaken);
  ASSERT_TRUE(held.Reached());
  ASSERT_EQ(pool.TryPost(
                "b", [&b_ran] { b_ran.set_value(); }, kNoRefusal,
                /*large=*/true),
            Outcome::kTaken);
  std::thread stopper([&pool] { pool.StopTaking(); });
  EXPECT_EQ(b_ran.get_future().wait_for(kGuard), std::future_status::ready);
  held.Open();
  stopper.join();
}

TEST(FairPoolTest, StopTakingWaitsForWhatItTookAndRefusesTheRest) {
  Gate gate;
  std::atomic<int> ran{0};
  FairPool pool(2, 64, 16, 1);
  OpenOnExit opens_gate(gate);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(pool.TryPost(
                  i % 2 ? "a" : "b",
                  [&] {
                    gate.Wait();
                    ++ran;
                  },
                  kNoRefusal),
              Outcome::kTaken);
  }
  std::thread opener([&gate] { gate.Open(); });
  pool.StopTaking();
  EXPECT_EQ(ran.load(), 10);
  EXPECT_EQ(pool.TryPost(
                "a", [] {}, kNoRefusal),
            Outcome::kStopped);
  opener.join();
}

TEST(FairPoolTest, ATaskThatThrowsLeavesThePoolWorking) {
  std::atomic<bool> ran{false};
  FairPool pool(1, 64, 16, 1);
  ASSERT_EQ(pool.TryPost(
                "a", [] { throw std::runtime_error("bad body"); }, kNoRefusal),
            Outcome::kTaken);
  ASSERT_EQ(pool.TryPost(
                "a", [&ran] { ran = true; }, kNoRefusal),
            Outcome::kTaken);
  pool.StopTaking();
  EXPECT_TRUE(ran.load());
}

TEST(FairPoolTest, RefusesNoThreadsOrNoRoom) {
  EXPECT_THROW(FairPool(0, 64, 16, 1), std::invalid_argument);
  EXPECT_THROW(FairPool(2, 0, 16, 1), std::invalid_argument);
  EXPECT_THROW(FairPool(2, 64, 0, 1), std::invalid_argument);
  EXPECT_THROW(FairPool(2, 64, 16, 0), std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
