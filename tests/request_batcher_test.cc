// Tests of RequestBatcher (its RequestQueue and DecodeWorkers), the unit
// under test. Scheduling (admission between steps, rows counted by beam, full
// queue, stopping, deadlines, cancellation, failures) is driven by
// ScriptedEngine, whose sentences last as many steps as their sources say
// and whose steps can be held open, so every case is deterministic; the
// last tests decode with the real tiny model through TranslatorDecodeEngine.

#include "server/request_batcher.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/pipeline/translator.h"
#include "server/decode_engine.h"
#include "server/decode_worker.h"
#include "server/server_metrics.h"
#include "server/translator_decode_engine.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using std::chrono::system_clock;
using Ids = std::vector<int64_t>;

constexpr auto kNoDeadline = system_clock::time_point::max();
constexpr auto kForever = std::chrono::minutes(10);
// A source whose first id is this makes ScriptedEngine fail on it.
constexpr int64_t kFailingSource = -1;

// A DecodeEngine following a script written into its sources: a sentence
// ends after ids[0] steps (at least one), takes beam_size rows, and its
// target is its source ids, so routing is checkable. Records what the batcher
// asks of it (Add sizes, the step each source was added at, removed sources,
// the most rows at once), holds chosen steps open until Release(), and
// throws where told to (dropping every sentence, as the contract says).
class ScriptedEngine final : public DecodeEngine {
 public:
  std::vector<int64_t> Add(const std::vector<EncodedSource>& sources) override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const EncodedSource& source : sources) {
      if (source.ids.front() == kFailingSource) {
        throw std::runtime_error("cannot encode source");
      }
    }
    add_sizes_.push_back(static_cast<int>(sources.size()));
    std::vector<int64_t> handles;
    for (const EncodedSource& source : sources) {
      handles.push_back(next_handle_);
      rows_.push_back({next_handle_++, source.ids,
                       std::max<int64_t>(1, source.ids.front()), 0,
                       source.beam_size});
      added_at_step_[source.ids] = steps_;
    }
    int rows = 0;
    for (const Row& row : rows_) rows += row.beam_size;
    max_active_ = std::max(max_active_, rows);
    return handles;
  }

  std::vector<Finished> Step() override {
    std::unique_lock<std::mutex> lock(mutex_);
    const int step = ++steps_;
    if (step == held_step_) {
      held_ = true;
      changed_.notify_all();
      changed_.wait(lock, [this] { return !held_; });
    }
    if (failing_steps_.count(step) > 0) {
      rows_.clear();
      throw std::runtime_error("model exploded\nC++ backtrace: frame 0 ...");
    }
    std::vector<Finished> finished;
    std::vector<Row> kept;
    for (Row& row : rows_) {
      if (++row.steps_done >= row.length) {
        finished.push_back({row.handle, row.ids});
      } else {
        kept.push_back(std::move(row));
      }
    }
    rows_ = std::move(kept);
    return finished;
  }

  void Remove(const std::vector<int64_t>& handles) override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t handle : handles) {
      auto row = std::find_if(rows_.begin(), rows_.end(),
                              [&](const Row& r) { return r.handle == handle; });
      if (row == rows_.end()) continue;
      removed_.push_back(row->ids);
      rows_.erase(row);
    }
  }

  // Sentences in flight.
  int64_t active() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int64_t>(rows_.size());
  }

  // Step number `step` (counted from 1) waits for Release() before running.
  void HoldStep(int step) {
    std::lock_guard<std::mutex> lock(mutex_);
    held_step_ = step;
  }
  // Blocks until the worker is inside the held step.
  void WaitUntilHeld() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return held_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ = false;
    changed_.notify_all();
  }
  // Step number `step` throws.
  void FailStep(int step) {
    std::lock_guard<std::mutex> lock(mutex_);
    failing_steps_.insert(step);
  }

  int steps() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return steps_;
  }
  // Steps run before `source` was added; -1 if it never was.
  int added_at_step(const Ids& source) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = added_at_step_.find(source);
    return it == added_at_step_.end() ? -1 : it->second;
  }
  std::vector<int> add_sizes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return add_sizes_;
  }
  std::vector<Ids> removed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return removed_;
  }
  int max_active() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return max_active_;
  }

 private:
  struct Row {
    int64_t handle;
    Ids ids;
    int64_t length;      // Steps until it ends.
    int64_t steps_done;  // Steps it has been in.
    int beam_size;       // Rows it takes.
  };

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // Signals held_ changing.
  // All guarded by mutex_.
  std::vector<Row> rows_;
  int64_t next_handle_ = 0;
  int steps_ = 0;
  int held_step_ = -1;
  bool held_ = false;
  std::set<int> failing_steps_;
  std::map<Ids, int> added_at_step_;
  std::vector<int> add_sizes_;
  std::vector<Ids> removed_;
  int max_active_ = 0;  // Most rows at once.
};

// A request's outcome, delivered through a promise.
struct Outcome {
  grpc::StatusCode code;
  std::string message;
  Ids target_ids;
  int step;  // Engine steps run when it completed; -1 without an engine.
};

// A DoneCallback that fulfils `promise`, noting `engine`'s step count when
// given; fails the test if called twice.
RequestBatcher::DoneCallback Fulfil(std::promise<Outcome>& promise,
                                    const ScriptedEngine* engine = nullptr) {
  auto called = std::make_shared<bool>(false);
  return [&promise, engine, called](const grpc::Status& status,
                                    DecodedPart target) {
    EXPECT_FALSE(*called) << "callback called twice";
    *called = true;
    promise.set_value({status.error_code(), status.error_message(),
                       std::move(target.target_ids),
                       engine == nullptr ? -1 : engine->steps()});
  };
}

// How long a test waits for an answer before it fails.
constexpr auto kPatience = std::chrono::seconds(60);

// Waits for `future` and fails the test, ending the process, if it is not
// ready within kPatience: a batcher that loses a request fails here by
// assertion rather than hanging until CTest's timeout.
template <typename T>
void Await(std::future<T>& future) {
  if (future.wait_for(kPatience) != std::future_status::ready) {
    ADD_FAILURE() << "no answer within " << kPatience.count() << " s";
    std::_Exit(1);  // The callback may still come, into a dead frame.
  }
}

// The outcome of `future`, within kPatience (see Await).
Outcome Get(std::future<Outcome> future) {
  Await(future);
  return future.get();
}

EncodedSource Source(Ids ids, int beam_size = 1) {
  return {std::move(ids), beam_size};
}

BatcherOptions Options(int max_batch_size, int max_queue,
                       std::chrono::microseconds delay) {
  BatcherOptions options;
  options.max_batch_size = max_batch_size;
  options.max_queue = max_queue;
  options.max_batch_delay = delay;
  return options;
}

TEST(RequestBatcherTest, RejectsInvalidOptions) {
  ScriptedEngine engine;
  const auto delay = std::chrono::milliseconds(1);
  EXPECT_THROW(RequestBatcher(Options(0, 4, delay), {&engine}, nullptr),
               std::invalid_argument);
  EXPECT_THROW(RequestBatcher(Options(4, 0, delay), {&engine}, nullptr),
               std::invalid_argument);
  EXPECT_THROW(RequestBatcher(Options(4, 4, delay), {}, nullptr),
               std::invalid_argument);
  EXPECT_THROW(
      RequestBatcher(Options(4, 4, delay), {&engine, nullptr}, nullptr),
      std::invalid_argument);
}

TEST(RequestBatcherTest, FullQueueRejectsWithResourceExhausted) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  RequestBatcher batcher(Options(1, 2, std::chrono::milliseconds(0)), {&engine},
                         nullptr);
  // The first request fills the one row; the next two fill the queue.
  std::promise<Outcome> in_flight, queued1, queued2, rejected;
  batcher.Submit(Source({1}), kNoDeadline, nullptr, Fulfil(in_flight));
  engine.WaitUntilHeld();
  batcher.Submit(Source({2}), kNoDeadline, nullptr, Fulfil(queued1));
  batcher.Submit(Source({3}), kNoDeadline, nullptr, Fulfil(queued2));
  batcher.Submit(Source({4}), kNoDeadline, nullptr, Fulfil(rejected));

  // Rejection is immediate, while the others still wait.
  Outcome outcome = Get(rejected.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(outcome.message.find("queue is full"), std::string::npos);

  engine.Release();
  EXPECT_EQ(Get(in_flight.get_future()).code, grpc::StatusCode::OK);
  EXPECT_EQ(Get(queued1.get_future()).code, grpc::StatusCode::OK);
  EXPECT_EQ(Get(queued2.get_future()).code, grpc::StatusCode::OK);
}

TEST(RequestBatcherTest, StopDrainsQueueAndRowsAndRejectsNewWithUnavailable) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  // A queue too large to fill while the retry loop below waits for Stop.
  auto batcher = std::make_unique<RequestBatcher>(
      Options(1, 1 << 30, std::chrono::milliseconds(0)),
      std::vector<DecodeEngine*>{&engine}, nullptr);
  std::promise<Outcome> in_flight, queued;
  batcher->Submit(Source({3, 1}), kNoDeadline, nullptr, Fulfil(in_flight));
  engine.WaitUntilHeld();
  batcher->Submit(Source({2, 2}), kNoDeadline, nullptr, Fulfil(queued));

  // Stop blocks until drained, so run it on another thread and release the
  // engine once the batcher has started refusing work.
  std::thread stopper([&] { batcher->Stop(); });
  // Retry until Stop has taken effect; each attempt before that is accepted
  // and simply completes after the release.
  std::vector<std::unique_ptr<std::promise<Outcome>>> accepted;
  std::vector<std::future<Outcome>> accepted_futures;
  while (true) {
    auto attempt = std::make_unique<std::promise<Outcome>>();
    std::future<Outcome> attempt_future = attempt->get_future();
    batcher->Submit(Source({1, 3}), kNoDeadline, nullptr, Fulfil(*attempt));
    if (attempt_future.wait_for(std::chrono::seconds(0)) ==
        std::future_status::ready) {
      EXPECT_EQ(Get(std::move(attempt_future)).code,
                grpc::StatusCode::UNAVAILABLE);
      break;
    }
    accepted.push_back(std::move(attempt));
    accepted_futures.push_back(std::move(attempt_future));
    std::this_thread::yield();
  }
  engine.Release();
  stopper.join();
  // The row decoding and everything queued before Stop were finished, not
  // dropped.
  EXPECT_EQ(Get(in_flight.get_future()).target_ids, (Ids{3, 1}));
  EXPECT_EQ(Get(queued.get_future()).target_ids, (Ids{2, 2}));
  for (std::future<Outcome>& attempt : accepted_futures) {
    EXPECT_EQ(Get(std::move(attempt)).code, grpc::StatusCode::OK);
  }
  // After Stop has returned, submissions are still refused.
  std::promise<Outcome> after_stop;
  batcher->Submit(Source({4}), kNoDeadline, nullptr, Fulfil(after_stop));
  EXPECT_EQ(Get(after_stop.get_future()).code, grpc::StatusCode::UNAVAILABLE);
}

TEST(RequestBatcherTest, ExpiredDeadlineIsNotDecoded) {
  ScriptedEngine engine;
  RequestBatcher batcher(Options(4, 8, std::chrono::milliseconds(0)), {&engine},
                         nullptr);
  std::promise<Outcome> expired;
  batcher.Submit(Source({1, 2}), system_clock::now() - std::chrono::seconds(1),
                 nullptr, Fulfil(expired));
  Outcome outcome = Get(expired.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(outcome.target_ids.empty());
  batcher.Stop();
  EXPECT_TRUE(engine.add_sizes().empty()) << "expired request was decoded";
}

TEST(RequestBatcherTest, DeadlinePassingWhileQueuedIsNotDecoded) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  RequestBatcher batcher(Options(1, 8, std::chrono::milliseconds(0)), {&engine},
                         nullptr);
  std::promise<Outcome> in_flight, doomed;
  batcher.Submit(Source({1}), kNoDeadline, nullptr, Fulfil(in_flight));
  engine.WaitUntilHeld();
  // Valid when queued; passed by the time the worker gets to it, since that
  // only happens after Release() below, which follows the deadline.
  const auto deadline = system_clock::now() + std::chrono::milliseconds(1);
  batcher.Submit(Source({2, 2}), deadline, nullptr, Fulfil(doomed));
  while (system_clock::now() <= deadline) std::this_thread::yield();
  engine.Release();
  EXPECT_EQ(Get(in_flight.get_future()).code, grpc::StatusCode::OK);
  EXPECT_EQ(Get(doomed.get_future()).code, grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(engine.added_at_step({2, 2}), -1) << "expired request was decoded";
}

TEST(RequestBatcherTest, DeadlinePassingDuringDecodingDropsOnlyThatRow) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  // Two requests fill the batch, so both start at once despite the delay.
  RequestBatcher batcher(Options(2, 8, kForever), {&engine}, nullptr);
  const auto deadline = system_clock::now() + std::chrono::milliseconds(500);
  std::promise<Outcome> doomed, survivor;
  batcher.Submit(Source({50, 1}), deadline, nullptr, Fulfil(doomed, &engine));
  batcher.Submit(Source({5, 2}), kNoDeadline, nullptr,
                 Fulfil(survivor, &engine));
  engine.WaitUntilHeld();
  ASSERT_EQ(engine.added_at_step({50, 1}), 0) << "admitted too late to test";
  while (system_clock::now() <= deadline) std::this_thread::yield();
  engine.Release();

  Outcome outcome = Get(doomed.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(outcome.step, 1) << "answered only after further steps";
  EXPECT_EQ(engine.removed(), (std::vector<Ids>{{50, 1}}));
  outcome = Get(survivor.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::OK);
  EXPECT_EQ(outcome.target_ids, (Ids{5, 2}));
  EXPECT_EQ(outcome.step, 5);
}

TEST(RequestBatcherTest, CancellationFreesTheRowForWaitingRequests) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  RequestBatcher batcher(Options(2, 8, kForever), {&engine}, nullptr);
  std::atomic<bool> cancelled{false};
  std::promise<Outcome> abandoned, survivor, waiting;
  batcher.Submit(
      Source({50, 1}), kNoDeadline, [&] { return cancelled.load(); },
      Fulfil(abandoned, &engine));
  batcher.Submit(Source({5, 2}), kNoDeadline, nullptr,
                 Fulfil(survivor, &engine));
  engine.WaitUntilHeld();
  // Both rows are taken, so this one waits for a free row.
  batcher.Submit(Source({2, 3}), kNoDeadline, nullptr,
                 Fulfil(waiting, &engine));
  cancelled = true;
  engine.Release();

  Outcome outcome = Get(abandoned.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::CANCELLED);
  EXPECT_EQ(outcome.step, 1);
  EXPECT_EQ(engine.removed(), (std::vector<Ids>{{50, 1}}));
  // The freed row took the waiting request at the next step, long before
  // the cancelled one's 50 steps would have ended.
  outcome = Get(waiting.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::OK);
  EXPECT_EQ(engine.added_at_step({2, 3}), 1);
  EXPECT_EQ(outcome.step, 3);
  EXPECT_EQ(Get(survivor.get_future()).step, 5);
  EXPECT_EQ(engine.max_active(), 2);
}

TEST(RequestBatcherTest, CancelledWhileQueuedIsNotDecoded) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  RequestBatcher batcher(Options(1, 8, std::chrono::milliseconds(0)), {&engine},
                         nullptr);
  std::promise<Outcome> in_flight, abandoned;
  batcher.Submit(Source({1}), kNoDeadline, nullptr, Fulfil(in_flight));
  engine.WaitUntilHeld();
  batcher.Submit(
      Source({2, 2}), kNoDeadline, [] { return true; }, Fulfil(abandoned));
  engine.Release();
  EXPECT_EQ(Get(in_flight.get_future()).code, grpc::StatusCode::OK);
  EXPECT_EQ(Get(abandoned.get_future()).code, grpc::StatusCode::CANCELLED);
  EXPECT_EQ(engine.added_at_step({2, 2}), -1);
}

// The point of continuous batching: a short request admitted while a long one
// decodes finishes after its own steps, not after the long one's.
TEST(RequestBatcherTest, LongRequestDoesNotHoldBackShortOnes) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  // The batching delay is ten minutes: only admission between steps, which
  // never waits for it, lets the short requests in.
  constexpr int kMaxRows = 4;
  RequestBatcher batcher(Options(kMaxRows, 64, kForever), {&engine}, nullptr);
  // A 50-step request and three 1-step ones fill the batch and start.
  std::promise<Outcome> long_request;
  std::vector<std::promise<Outcome>> fillers(3), shorts(3);
  batcher.Submit(Source({50, 0}), kNoDeadline, nullptr,
                 Fulfil(long_request, &engine));
  for (int i = 0; i < 3; ++i) {
    batcher.Submit(Source({1, 10 + i}), kNoDeadline, nullptr,
                   Fulfil(fillers[i], &engine));
  }
  engine.WaitUntilHeld();
  // Three 3-step requests arrive while the long one is decoding.
  for (int i = 0; i < 3; ++i) {
    batcher.Submit(Source({3, 20 + i}), kNoDeadline, nullptr,
                   Fulfil(shorts[i], &engine));
  }
  engine.Release();

  for (int i = 0; i < 3; ++i) {
    const Ids source = {3, 20 + i};
    Outcome outcome = Get(shorts[i].get_future());
    ASSERT_EQ(outcome.code, grpc::StatusCode::OK) << outcome.message;
    EXPECT_EQ(outcome.target_ids, source);
    const int admitted_at = engine.added_at_step(source);
    EXPECT_EQ(admitted_at, 1) << "not admitted at the first free step";
    EXPECT_LE(outcome.step - admitted_at, 3 + 1) << "short request " << i;
  }
  Outcome outcome = Get(long_request.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::OK);
  EXPECT_EQ(outcome.step, 50);
  EXPECT_EQ(engine.add_sizes(), (std::vector<int>{4, 3}));
  EXPECT_EQ(engine.max_active(), kMaxRows);
}

TEST(RequestBatcherTest, ConcurrentRequestsShareStepsAndGetTheirOwnResults) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  constexpr int kMaxRows = 8;
  RequestBatcher batcher(Options(kMaxRows, 64, std::chrono::milliseconds(0)),
                         {&engine}, nullptr);
  constexpr int kRequests = 17;
  std::vector<std::promise<Outcome>> outcomes(kRequests);
  // Request i (after the first) lasts 2 steps and has kRequests - i + 2
  // tokens: lengths differ, and results must be routed back by handle.
  auto source_of = [](int i) {
    Ids ids(kRequests - i + 2, i);
    ids.front() = 2;
    return ids;
  };
  // The first request holds step 1 while the others queue behind it from
  // many threads.
  batcher.Submit(Source({1}), kNoDeadline, nullptr, Fulfil(outcomes[0]));
  engine.WaitUntilHeld();
  std::vector<std::thread> clients;
  for (int i = 1; i < kRequests; ++i) {
    clients.emplace_back([&, i] {
      batcher.Submit(Source(source_of(i)), kNoDeadline, nullptr,
                     Fulfil(outcomes[i]));
    });
  }
  for (std::thread& client : clients) client.join();
  engine.Release();

  EXPECT_EQ(Get(outcomes[0].get_future()).target_ids, (Ids{1}));
  for (int i = 1; i < kRequests; ++i) {
    Outcome outcome = Get(outcomes[i].get_future());
    ASSERT_EQ(outcome.code, grpc::StatusCode::OK) << outcome.message;
    EXPECT_EQ(outcome.target_ids, source_of(i)) << "request " << i;
  }
  // 16 requests waiting with 8 rows: two groups of 8 rows.
  EXPECT_EQ(engine.add_sizes(), (std::vector<int>{1, 8, 8}));
  EXPECT_EQ(engine.max_active(), kMaxRows);
}

TEST(RequestBatcherTest, OldestRequestStartsAfterMaxDelay) {
  ScriptedEngine engine;
  // A batch of 32 never fills with one request; the delay must start it.
  RequestBatcher batcher(Options(32, 64, std::chrono::milliseconds(20)),
                         {&engine}, nullptr);
  std::promise<Outcome> alone;
  const auto start = std::chrono::steady_clock::now();
  batcher.Submit(Source({5}), kNoDeadline, nullptr, Fulfil(alone));
  EXPECT_EQ(Get(alone.get_future()).code, grpc::StatusCode::OK);
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(20));
  EXPECT_EQ(engine.add_sizes(), (std::vector<int>{1}));
}

// A beam search text joins between steps like a greedy one, takes beam_size
// of the batch's rows, and neither kind waits for the other to finish.
TEST(RequestBatcherTest, BeamTextsJoinBetweenStepsAndTakeBeamSizeRows) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  RequestBatcher batcher(Options(5, 8, std::chrono::milliseconds(0)), {&engine},
                         nullptr);
  std::promise<Outcome> long_greedy, beam, short_greedy, failing_beam;
  batcher.Submit(Source({5, 1}), kNoDeadline, nullptr,
                 Fulfil(long_greedy, &engine));
  engine.WaitUntilHeld();
  // 1 + 4 rows fill the batch; the next greedy text waits for free rows.
  batcher.Submit(Source({2, 2, 2}, 4), kNoDeadline, nullptr,
                 Fulfil(beam, &engine));
  batcher.Submit(Source({1, 3}), kNoDeadline, nullptr,
                 Fulfil(short_greedy, &engine));
  engine.Release();
  Outcome outcome = Get(beam.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::OK);
  EXPECT_EQ(outcome.target_ids, (Ids{2, 2, 2}));
  EXPECT_EQ(engine.added_at_step({2, 2, 2}), 1) << "joined after step 1";
  EXPECT_EQ(outcome.step, 3) << "beam text waited for the greedy row";
  EXPECT_EQ(Get(short_greedy.get_future()).step, 4);
  EXPECT_EQ(engine.added_at_step({1, 3}), 3) << "admitted beyond 5 rows";
  EXPECT_EQ(Get(long_greedy.get_future()).step, 5);
  EXPECT_EQ(engine.max_active(), 5);

  // A beam text the engine cannot add fails alone.
  batcher.Submit(Source({kFailingSource}, 2), kNoDeadline, nullptr,
                 Fulfil(failing_beam));
  outcome = Get(failing_beam.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::INTERNAL);
  EXPECT_NE(outcome.message.find("cannot encode source"), std::string::npos);
}

TEST(RequestBatcherTest, BeamWiderThanABatchIsInvalid) {
  ScriptedEngine engine;
  RequestBatcher batcher(Options(4, 8, kForever), {&engine}, nullptr);
  std::promise<Outcome> outcome;
  batcher.Submit(Source({1}, 5), kNoDeadline, nullptr, Fulfil(outcome));
  const Outcome result = Get(outcome.get_future());
  EXPECT_EQ(result.code, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(result.message.find("max_batch_size 4"), std::string::npos);
  EXPECT_EQ(engine.add_sizes().size(), 0u);
}

// SubmitAll queues a whole TranslateBatch or none of it.
TEST(RequestBatcherTest, SubmitAllQueuesEverythingOrNothing) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  RequestBatcher batcher(Options(1, 3, std::chrono::milliseconds(0)), {&engine},
                         nullptr);
  std::promise<Outcome> running;
  batcher.Submit(Source({1, 0}), kNoDeadline, nullptr, Fulfil(running));
  engine.WaitUntilHeld();  // The queue is empty again, its 3 places free.
  auto requests_of = [](int count, std::vector<std::promise<Outcome>>& done) {
    std::vector<PendingRequest> requests(count);
    for (int i = 0; i < count; ++i) {
      requests[i].source = Source({1, 10 + i});
      requests[i].deadline = kNoDeadline;
      requests[i].done = Fulfil(done[i]);
    }
    return requests;
  };
  std::vector<std::promise<Outcome>> refused(4);
  std::vector<PendingRequest> four = requests_of(4, refused);
  const grpc::Status status = batcher.SubmitAll(four);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(four.size(), 4u) << "refused requests are handed back";
  std::vector<std::promise<Outcome>> accepted(3);
  std::vector<PendingRequest> three = requests_of(3, accepted);
  EXPECT_TRUE(batcher.SubmitAll(three).ok());
  engine.Release();
  for (auto& outcome : accepted) {
    EXPECT_EQ(Get(outcome.get_future()).code, grpc::StatusCode::OK);
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(engine.added_at_step({1, 10 + i}), i < 3 ? i + 1 : -1);
  }
}

TEST(RequestBatcherTest, FailingStepFailsOnlyTheRowsInIt) {
  ScriptedEngine engine;
  engine.FailStep(2);
  RequestBatcher batcher(Options(2, 8, kForever), {&engine}, nullptr);
  // Three pairs, each filling the batch and lasting one step: step 1 works,
  // step 2 throws, step 3 works again.
  std::vector<std::promise<Outcome>> outcomes(6);
  std::vector<std::future<Outcome>> futures;
  for (auto& outcome : outcomes) futures.push_back(outcome.get_future());
  for (int pair = 0; pair < 3; ++pair) {
    for (int i = 2 * pair; i < 2 * pair + 2; ++i) {
      batcher.Submit(Source({1, i}), kNoDeadline, nullptr, Fulfil(outcomes[i]));
    }
    // Wait for this pair to finish so pairs don't mix.
    Await(futures[2 * pair]);
    Await(futures[2 * pair + 1]);
  }
  for (int i = 0; i < 6; ++i) {
    Outcome outcome = Get(std::move(futures[i]));
    const bool in_failing_step = i == 2 || i == 3;
    EXPECT_EQ(outcome.code, in_failing_step ? grpc::StatusCode::INTERNAL
                                            : grpc::StatusCode::OK)
        << "request " << i;
    if (in_failing_step) {
      EXPECT_NE(outcome.message.find("model exploded"), std::string::npos);
      EXPECT_EQ(outcome.message.find("backtrace"), std::string::npos)
          << "the client sees the first line only: " << outcome.message;
    }
  }
}

TEST(RequestBatcherTest, FailingAddFailsOnlyTheRequestsAdded) {
  ScriptedEngine engine;
  engine.HoldStep(1);
  RequestBatcher batcher(Options(2, 8, std::chrono::milliseconds(0)), {&engine},
                         nullptr);
  std::promise<Outcome> decoding, failing;
  batcher.Submit(Source({3, 1}), kNoDeadline, nullptr, Fulfil(decoding));
  engine.WaitUntilHeld();
  batcher.Submit(Source({kFailingSource}), kNoDeadline, nullptr,
                 Fulfil(failing));
  engine.Release();
  Outcome outcome = Get(failing.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::INTERNAL);
  EXPECT_NE(outcome.message.find("cannot encode source"), std::string::npos);
  outcome = Get(decoding.get_future());
  EXPECT_EQ(outcome.code, grpc::StatusCode::OK);
  EXPECT_EQ(outcome.target_ids, (Ids{3, 1}));
}

// An engine that keeps failing stops its worker after kMaxFailedSteps
// failures in a row and reports it once (the server then turns health
// NOT_SERVING); with no worker left, waiting and new texts get UNAVAILABLE.
// A step that works in between starts the count again.
TEST(RequestBatcherTest, EngineFailingStepsInARowIsReportedBroken) {
  static_assert(DecodeWorker::kMaxFailedSteps == 3, "the script counts 3");
  ScriptedEngine engine;
  for (int step : {1, 2, 4, 5, 6}) engine.FailStep(step);
  std::atomic<int> broken_reports{0};
  std::promise<void> reported;
  RequestBatcher batcher(Options(1, 16, std::chrono::milliseconds(0)),
                         {&engine}, nullptr, [&broken_reports, &reported] {
                           if (++broken_reports == 1) reported.set_value();
                         });
  std::vector<std::promise<Outcome>> outcomes(8);
  std::vector<std::future<Outcome>> futures;
  for (auto& outcome : outcomes) futures.push_back(outcome.get_future());
  // One text per step: steps 1, 2 fail, 3 works, 4, 5, 6 fail.
  engine.HoldStep(1);
  for (int i = 0; i < 7; ++i) {
    batcher.Submit(Source({1, i}), kNoDeadline, nullptr, Fulfil(outcomes[i]));
    if (i == 0) engine.WaitUntilHeld();
  }
  engine.Release();
  const std::vector<grpc::StatusCode> expected = {
      grpc::StatusCode::INTERNAL,   grpc::StatusCode::INTERNAL,
      grpc::StatusCode::OK,         grpc::StatusCode::INTERNAL,
      grpc::StatusCode::INTERNAL,   grpc::StatusCode::INTERNAL,
      grpc::StatusCode::UNAVAILABLE};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(Get(std::move(futures[i])).code, expected[i]) << "text " << i;
  }
  batcher.Submit(Source({1, 7}), kNoDeadline, nullptr, Fulfil(outcomes[7]));
  const Outcome refused = Get(std::move(futures[7]));
  EXPECT_EQ(refused.code, grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(refused.message.find("new version"), std::string::npos);
  // Reported once the worker has left the queue (after it answered what
  // waited), so that health sees the queue as it is.
  std::future<void> report = reported.get_future();
  Await(report);
  EXPECT_FALSE(batcher.Serving());
  EXPECT_EQ(broken_reports.load(), 1);
  EXPECT_EQ(engine.steps(), 6);
}

TEST(RequestBatcherTest, RecordsMetrics) {
  prometheus::Registry registry;
  ServerMetrics server_metrics(registry);
  const std::unique_ptr<ModelMetrics> metrics =
      server_metrics.ForModel("en-zh", 1, "test", "cpu");
  ScriptedEngine engine;
  RequestBatcher batcher(Options(2, 8, kForever), {&engine}, metrics.get());
  // One step and 3 tokens; two steps and 2 tokens. Step 1 has two rows,
  // step 2 one.
  std::promise<Outcome> a, b;
  batcher.Submit(Source({1, 2, 3}), kNoDeadline, nullptr, Fulfil(a));
  batcher.Submit(Source({2, 9}), kNoDeadline, nullptr, Fulfil(b));
  Get(a.get_future());
  Get(b.get_future());
  batcher.Stop();

  double step_rows = -1, steps = -1, generated_tokens = -1, queue_waits = -1,
         decodes = -1;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.metric.empty()) continue;
    const prometheus::ClientMetric& metric = family.metric.front();
    if (family.name == "fanyi_batch_size") {
      step_rows = metric.histogram.sample_sum;
      steps = static_cast<double>(metric.histogram.sample_count);
    } else if (family.name == "fanyi_generated_tokens_total") {
      generated_tokens = metric.counter.value;
    } else if (family.name == "fanyi_queue_wait_seconds") {
      queue_waits = static_cast<double>(metric.histogram.sample_count);
    } else if (family.name == "fanyi_decode_duration_seconds") {
      decodes = static_cast<double>(metric.histogram.sample_count);
    }
  }
  EXPECT_EQ(step_rows, 3);
  EXPECT_EQ(steps, 2);
  EXPECT_EQ(generated_tokens, 5);
  EXPECT_EQ(queue_waits, 2);
  EXPECT_EQ(decodes, 2);
}

// Two engines share the queue, and neither takes more than its fair share
// of the rows (all rows over the workers), though each may take 16.
TEST(RequestBatcherTest, WorkersSplitTheRowsFairly) {
  ScriptedEngine first, second;
  first.HoldStep(1);
  second.HoldStep(1);
  RequestBatcher batcher(Options(16, 64, std::chrono::milliseconds(0)),
                         {&first, &second}, nullptr);
  std::vector<std::promise<Outcome>> outcomes(16);
  for (int i = 0; i < 16; ++i) {
    batcher.Submit(Source({2, i}), kNoDeadline, nullptr, Fulfil(outcomes[i]));
  }
  // Whichever worker took requests first is held in its first step with at
  // most half of them, so the other worker must have taken the rest.
  first.WaitUntilHeld();
  second.WaitUntilHeld();
  EXPECT_GE(first.active(), 1);
  EXPECT_GE(second.active(), 1);
  first.Release();
  second.Release();
  for (int i = 0; i < 16; ++i) {
    const Outcome outcome = Get(outcomes[i].get_future());
    ASSERT_EQ(outcome.code, grpc::StatusCode::OK) << outcome.message;
    EXPECT_EQ(outcome.target_ids, (Ids{2, i}));
  }
  batcher.Stop();
  EXPECT_LE(first.max_active(), 8);
  EXPECT_LE(second.max_active(), 8);
}

// The real engine, holding its first step until the test has queued every
// request, so that later requests join rows already decoding. Counts those
// joins.
class HeldRealEngine final : public DecodeEngine {
 public:
  explicit HeldRealEngine(Translator& translator)
      : engine_(translator), released_(release_.get_future().share()) {}

  std::vector<int64_t> Add(const std::vector<EncodedSource>& sources) override {
    if (in_flight_ > 0) ++joins_;
    std::vector<int64_t> handles = engine_.Add(sources);
    in_flight_ += static_cast<int>(handles.size());
    return handles;
  }
  std::vector<Finished> Step() override {
    if (first_step_) {
      first_step_ = false;
      first_step_started_.set_value();
      released_.wait();
    }
    std::vector<Finished> finished = engine_.Step();
    in_flight_ -= static_cast<int>(finished.size());
    return finished;
  }
  void Remove(const std::vector<int64_t>& handles) override {
    engine_.Remove(handles);
    in_flight_ -= static_cast<int>(handles.size());  // No test removes others.
  }

  std::future<void> FirstStepStarted() {
    return first_step_started_.get_future();
  }
  void Release() { release_.set_value(); }
  // Adds made while rows were decoding; read after the batcher has stopped.
  int joins() const { return joins_; }

 private:
  TranslatorDecodeEngine engine_;
  std::promise<void> first_step_started_;
  std::promise<void> release_;
  const std::shared_future<void> released_;
  // Touched by the batcher's worker only (joins_ read once it has stopped).
  bool first_step_ = true;
  int in_flight_ = 0;
  int joins_ = 0;
};

// The real tiny model, trained once per process: MakeTempDir empties the
// directory that TrainTinyModel caches, so calling both again (e.g.
// --gtest_repeat) would lose the model.
std::unique_ptr<Translator> LoadTinyTranslator() {
  static const std::string* model_dir = new std::string(
      testing_util::TrainTinyModel(testing_util::MakeTempDir("batcher_model")));
  return Translator::Load(*model_dir, TranslatorOptions{"cpu", 1});
}

// `count` sources cycling through a few texts, with a beam search request
// (beam 2) among every 8 greedy ones.
std::vector<EncodedSource> MixedSources(const Translator& translator,
                                        int count) {
  const std::vector<std::string> texts = {
      "Thank you very much.",  "hello",        "I like tea.",
      "Where is the station?", "good morning", "tea",
      "Where is the tea?"};
  std::vector<EncodedSource> sources;
  for (int i = 0; i < count; ++i) {
    sources.push_back(
        translator.pipeline().EncodeSentence(texts[i % texts.size()]));
    if (i % 8 == 5) sources.back().beam_size = 2;
  }
  return sources;
}

// The ids of decoding each source alone.
std::vector<Ids> DecodedAlone(Translator& translator,
                              const std::vector<EncodedSource>& sources) {
  std::vector<Ids> expected;
  for (const EncodedSource& source : sources) {
    expected.push_back(translator.DecodeParts({source}).front().target_ids);
  }
  return expected;
}

// The batcher in front of the real tiny model: each request gets the same ids
// as decoding it alone, though rows join and leave the batch between steps.
TEST(RequestBatcherTest, RealModelResultsMatchSingleDecoding) {
  std::unique_ptr<Translator> translator = LoadTinyTranslator();
  const std::vector<EncodedSource> sources = MixedSources(*translator, 24);
  const std::vector<Ids> expected = DecodedAlone(*translator, sources);

  HeldRealEngine engine(*translator);
  std::future<void> first_step_started = engine.FirstStepStarted();
  RequestBatcher batcher(Options(4, 64, std::chrono::milliseconds(0)),
                         {&engine}, nullptr);
  std::vector<std::promise<Outcome>> outcomes(sources.size());
  batcher.Submit(sources[0], kNoDeadline, nullptr, Fulfil(outcomes[0]));
  Await(first_step_started);
  std::vector<std::thread> clients;
  for (int client = 0; client < 4; ++client) {
    clients.emplace_back([&, client] {
      for (size_t i = 1 + client; i < sources.size(); i += 4) {
        batcher.Submit(sources[i], kNoDeadline, nullptr, Fulfil(outcomes[i]));
      }
    });
  }
  for (std::thread& thread : clients) thread.join();
  engine.Release();
  for (size_t i = 0; i < sources.size(); ++i) {
    Outcome outcome = Get(outcomes[i].get_future());
    ASSERT_EQ(outcome.code, grpc::StatusCode::OK) << outcome.message;
    EXPECT_EQ(outcome.target_ids, expected[i]) << "request " << i;
  }
  batcher.Stop();
  EXPECT_GT(engine.joins(), 0) << "no request joined rows already decoding";
}

// Two workers decoding on one shared model at the same time (as the server
// runs with --workers 2) give each request the ids of decoding it alone.
// Both workers taking part is made sure of, not left to the scheduler: each
// engine's first Add waits until the other's has come too.
class Rendezvous {
 public:
  explicit Rendezvous(int parties) : waiting_for_(parties) {}

  // Waits until `parties` threads have arrived, or 60 s (then the test's
  // counts fail rather than hang).
  void Arrive() {
    std::unique_lock<std::mutex> lock(mutex_);
    --waiting_for_;
    arrived_.notify_all();
    arrived_.wait_for(lock, std::chrono::seconds(60),
                      [this] { return waiting_for_ <= 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  int waiting_for_;  // Guarded by mutex_.
};

// A real engine that counts the sentences it was given: which worker took
// part. Only its worker's thread drives it.
class CountingEngine : public DecodeEngine {
 public:
  CountingEngine(const Translator& translator, Rendezvous* first_add)
      : engine_(translator), first_add_(first_add) {}

  std::vector<int64_t> Add(const std::vector<EncodedSource>& sources) override {
    if (added_.fetch_add(static_cast<int>(sources.size())) == 0) {
      first_add_->Arrive();
    }
    return engine_.Add(sources);
  }
  std::vector<Finished> Step() override { return engine_.Step(); }
  void Remove(const std::vector<int64_t>& handles) override {
    engine_.Remove(handles);
  }

  // Read after the batcher has stopped.
  int added() const { return added_; }

 private:
  TranslatorDecodeEngine engine_;
  Rendezvous* const first_add_;
  std::atomic<int> added_{0};
};

TEST(RequestBatcherTest, TwoWorkersOnOneModelMatchSingleDecoding) {
  std::unique_ptr<Translator> translator = LoadTinyTranslator();
  const std::vector<EncodedSource> sources = MixedSources(*translator, 64);
  const std::vector<Ids> expected = DecodedAlone(*translator, sources);

  // Four rows a worker, 64 sentences: both workers decode, at once, on the
  // one shared model (the TSan evidence for that contract). The first
  // worker's first four rows wait in Add for the second worker, which
  // takes the next ones.
  Rendezvous first_adds(2);
  CountingEngine first(*translator, &first_adds),
      second(*translator, &first_adds);
  auto batcher = std::make_unique<RequestBatcher>(
      Options(4, 64, std::chrono::milliseconds(0)),
      std::vector<DecodeEngine*>{&first, &second}, nullptr);
  std::vector<std::promise<Outcome>> outcomes(sources.size());
  std::vector<std::thread> clients;
  for (int client = 0; client < 8; ++client) {
    clients.emplace_back([&, client] {
      for (size_t i = client; i < sources.size(); i += 8) {
        batcher->Submit(sources[i], kNoDeadline, nullptr, Fulfil(outcomes[i]));
      }
    });
  }
  for (std::thread& thread : clients) thread.join();
  for (size_t i = 0; i < sources.size(); ++i) {
    Outcome outcome = Get(outcomes[i].get_future());
    ASSERT_EQ(outcome.code, grpc::StatusCode::OK) << outcome.message;
    EXPECT_EQ(outcome.target_ids, expected[i]) << "request " << i;
  }
  batcher.reset();  // Workers joined: the counts are final.
  EXPECT_GT(first.added(), 0);
  EXPECT_GT(second.added(), 0);
  EXPECT_EQ(first.added() + second.added(), 64);
}

}  // namespace
}  // namespace fanyi
