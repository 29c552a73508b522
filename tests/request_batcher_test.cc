// Tests of RequestBatcher, the unit under test. Queueing behaviour (full
// queue, stopping, deadlines, batch formation, failures) is driven by batch
// functions the tests control, so that batches can be held open
// deterministically; one test decodes with the real tiny model.

#include "server/request_batcher.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/translator.h"
#include "server/server_metrics.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using std::chrono::system_clock;

constexpr auto kNoDeadline = system_clock::time_point::max();

// A request's outcome, delivered through a promise.
struct Outcome {
  grpc::StatusCode code;
  std::string message;
  std::vector<int64_t> target_ids;
};

// A DoneCallback that fulfils `promise`; fails the test if called twice.
RequestBatcher::DoneCallback Fulfil(std::promise<Outcome>& promise) {
  auto called = std::make_shared<bool>(false);
  return [&promise, called](const grpc::Status& status,
                            std::vector<int64_t> target_ids) {
    EXPECT_FALSE(*called) << "callback called twice";
    *called = true;
    promise.set_value(
        {status.error_code(), status.error_message(), std::move(target_ids)});
  };
}

EncodedSource Source(std::vector<int64_t> ids) { return {std::move(ids)}; }

// Echo decode step: the target of each row is its source, so routing is
// checkable. Records the size of each batch it sees.
class EchoDecoder {
 public:
  RequestBatcher::BatchFunction Function() {
    return [this](const std::vector<EncodedSource>& sources) {
      std::lock_guard<std::mutex> lock(mutex_);
      batch_sizes_.push_back(static_cast<int>(sources.size()));
      std::vector<std::vector<int64_t>> targets;
      for (const EncodedSource& source : sources) {
        targets.push_back(source.ids);
      }
      return targets;
    };
  }
  std::vector<int> batch_sizes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return batch_sizes_;
  }

 private:
  std::mutex mutex_;
  std::vector<int> batch_sizes_;  // Guarded by mutex_.
};

// A decode step that blocks, holding the worker busy, until Release(); lets
// a test fill the queue while a batch is in flight.
class GatedDecoder {
 public:
  RequestBatcher::BatchFunction Function() {
    return [this](const std::vector<EncodedSource>& sources) {
      std::unique_lock<std::mutex> lock(mutex_);
      ++batches_entered_;
      changed_.notify_all();
      changed_.wait(lock, [this] { return released_; });
      return std::vector<std::vector<int64_t>>(sources.size(),
                                               std::vector<int64_t>{7});
    };
  }
  // Blocks until the worker is inside the decode step.
  void WaitUntilDecoding() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return batches_entered_ > 0; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int batches_entered_ = 0;  // Guarded by mutex_.
  bool released_ = false;    // Guarded by mutex_.
};

BatcherOptions Options(int max_batch_size, int max_queue,
                       std::chrono::milliseconds delay) {
  BatcherOptions options;
  options.max_batch_size = max_batch_size;
  options.max_queue = max_queue;
  options.max_batch_delay = delay;
  return options;
}

TEST(RequestBatcherTest, RejectsInvalidOptions) {
  EchoDecoder decoder;
  EXPECT_THROW(RequestBatcher(Options(0, 4, std::chrono::milliseconds(1)),
                              decoder.Function(), nullptr),
               std::invalid_argument);
  EXPECT_THROW(RequestBatcher(Options(4, 0, std::chrono::milliseconds(1)),
                              decoder.Function(), nullptr),
               std::invalid_argument);
}

TEST(RequestBatcherTest, FullQueueRejectsWithResourceExhausted) {
  GatedDecoder decoder;
  RequestBatcher batcher(Options(1, 2, std::chrono::milliseconds(0)),
                         decoder.Function(), nullptr);
  // The first request occupies the worker; the next two fill the queue.
  std::promise<Outcome> in_flight, queued1, queued2, rejected;
  batcher.Submit(Source({1}), kNoDeadline, Fulfil(in_flight));
  decoder.WaitUntilDecoding();
  batcher.Submit(Source({2}), kNoDeadline, Fulfil(queued1));
  batcher.Submit(Source({3}), kNoDeadline, Fulfil(queued2));
  batcher.Submit(Source({4}), kNoDeadline, Fulfil(rejected));

  // Rejection is immediate, while the others still wait.
  Outcome outcome = rejected.get_future().get();
  EXPECT_EQ(outcome.code, grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(outcome.message.find("queue is full"), std::string::npos);

  decoder.Release();
  EXPECT_EQ(in_flight.get_future().get().code, grpc::StatusCode::OK);
  EXPECT_EQ(queued1.get_future().get().code, grpc::StatusCode::OK);
  EXPECT_EQ(queued2.get_future().get().code, grpc::StatusCode::OK);
}

TEST(RequestBatcherTest, StopDrainsQueueAndRejectsNewWithUnavailable) {
  GatedDecoder decoder;
  // A queue too large to fill while the retry loop below waits for Stop.
  auto batcher = std::make_unique<RequestBatcher>(
      Options(1, 1 << 30, std::chrono::milliseconds(0)), decoder.Function(),
      nullptr);
  std::promise<Outcome> in_flight, queued;
  batcher->Submit(Source({1}), kNoDeadline, Fulfil(in_flight));
  decoder.WaitUntilDecoding();
  batcher->Submit(Source({2}), kNoDeadline, Fulfil(queued));

  // Stop blocks until drained, so run it on another thread and release the
  // decoder once the batcher has started refusing work.
  std::thread stopper([&] { batcher->Stop(); });
  std::promise<Outcome> late;
  std::future<Outcome> late_future = late.get_future();
  // Retry until Stop has taken effect; each attempt before that is accepted
  // and simply completes after the release.
  std::vector<std::unique_ptr<std::promise<Outcome>>> accepted;
  while (true) {
    auto attempt = std::make_unique<std::promise<Outcome>>();
    std::future<Outcome> attempt_future = attempt->get_future();
    batcher->Submit(Source({3}), kNoDeadline, Fulfil(*attempt));
    if (attempt_future.wait_for(std::chrono::seconds(0)) ==
        std::future_status::ready) {
      Outcome outcome = attempt_future.get();
      EXPECT_EQ(outcome.code, grpc::StatusCode::UNAVAILABLE);
      break;
    }
    accepted.push_back(std::move(attempt));
    std::this_thread::yield();
  }
  decoder.Release();
  stopper.join();
  // Everything accepted before Stop was decoded, not dropped.
  EXPECT_EQ(in_flight.get_future().get().code, grpc::StatusCode::OK);
  EXPECT_EQ(queued.get_future().get().code, grpc::StatusCode::OK);
  // After Stop has returned, submissions are still refused.
  std::promise<Outcome> after_stop;
  batcher->Submit(Source({4}), kNoDeadline, Fulfil(after_stop));
  EXPECT_EQ(after_stop.get_future().get().code, grpc::StatusCode::UNAVAILABLE);
}

TEST(RequestBatcherTest, ExpiredDeadlineIsNotDecoded) {
  EchoDecoder decoder;
  RequestBatcher batcher(Options(4, 8, std::chrono::milliseconds(0)),
                         decoder.Function(), nullptr);
  std::promise<Outcome> expired;
  batcher.Submit(Source({1, 2}), system_clock::now() - std::chrono::seconds(1),
                 Fulfil(expired));
  Outcome outcome = expired.get_future().get();
  EXPECT_EQ(outcome.code, grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(outcome.target_ids.empty());
  batcher.Stop();
  EXPECT_TRUE(decoder.batch_sizes().empty()) << "expired request was decoded";
}

TEST(RequestBatcherTest, DeadlinePassingWhileQueuedIsNotDecoded) {
  GatedDecoder decoder;
  RequestBatcher batcher(Options(1, 8, std::chrono::milliseconds(0)),
                         decoder.Function(), nullptr);
  std::promise<Outcome> in_flight, doomed;
  batcher.Submit(Source({1}), kNoDeadline, Fulfil(in_flight));
  decoder.WaitUntilDecoding();
  // Valid when queued; passed by the time the worker gets to it, since that
  // only happens after Release() below, which follows the deadline.
  const auto deadline = system_clock::now() + std::chrono::milliseconds(1);
  batcher.Submit(Source({2}), deadline, Fulfil(doomed));
  while (system_clock::now() <= deadline) std::this_thread::yield();
  decoder.Release();
  EXPECT_EQ(in_flight.get_future().get().code, grpc::StatusCode::OK);
  EXPECT_EQ(doomed.get_future().get().code,
            grpc::StatusCode::DEADLINE_EXCEEDED);
}

TEST(RequestBatcherTest, ConcurrentRequestsFormBatchesAndGetTheirOwnResults) {
  EchoDecoder echo;
  GatedDecoder gate;
  // The first batch blocks on the gate while the others queue up behind it,
  // so the next batches are guaranteed to hold more than one request even
  // with no batching delay: the queue fills while the model is busy.
  auto first = std::make_shared<bool>(true);
  RequestBatcher::BatchFunction gated = gate.Function();
  RequestBatcher::BatchFunction echoed = echo.Function();
  RequestBatcher batcher(
      Options(8, 64, std::chrono::milliseconds(0)),
      [&, first](const std::vector<EncodedSource>& sources) {
        if (*first) {
          *first = false;  // Only the worker thread touches this.
          gated(sources);
        }
        return echoed(sources);
      },
      nullptr);

  constexpr int kRequests = 17;  // Two full batches of 8 and one more.
  std::vector<std::promise<Outcome>> outcomes(kRequests);
  std::vector<std::thread> clients;
  // Request i has i+1 source tokens, all equal to i: lengths differ, so the
  // batcher reorders rows and must route results back.
  batcher.Submit(Source({0}), kNoDeadline, Fulfil(outcomes[0]));
  gate.WaitUntilDecoding();
  for (int i = 1; i < kRequests; ++i) {
    clients.emplace_back([&, i] {
      batcher.Submit(Source(std::vector<int64_t>(kRequests - i + 1, i)),
                     kNoDeadline, Fulfil(outcomes[i]));
    });
  }
  for (std::thread& client : clients) client.join();
  gate.Release();

  for (int i = 0; i < kRequests; ++i) {
    Outcome outcome = outcomes[i].get_future().get();
    ASSERT_EQ(outcome.code, grpc::StatusCode::OK) << outcome.message;
    const std::vector<int64_t> expected =
        i == 0 ? std::vector<int64_t>{0}
               : std::vector<int64_t>(kRequests - i + 1, i);
    EXPECT_EQ(outcome.target_ids, expected) << "request " << i;
  }
  // 16 requests queued behind the gate with max_batch_size 8 flush as two
  // full batches.
  EXPECT_EQ(echo.batch_sizes(), (std::vector<int>{1, 8, 8}));
}

TEST(RequestBatcherTest, OldestRequestFlushesAfterMaxDelay) {
  EchoDecoder decoder;
  // A batch of 32 never fills with one request; the delay must flush it.
  RequestBatcher batcher(Options(32, 64, std::chrono::milliseconds(20)),
                         decoder.Function(), nullptr);
  std::promise<Outcome> alone;
  const auto start = std::chrono::steady_clock::now();
  batcher.Submit(Source({5}), kNoDeadline, Fulfil(alone));
  Outcome outcome = alone.get_future().get();
  EXPECT_EQ(outcome.code, grpc::StatusCode::OK);
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(20));
  EXPECT_EQ(decoder.batch_sizes(), (std::vector<int>{1}));
}

TEST(RequestBatcherTest, ExceptionFailsOnlyItsOwnBatch) {
  GatedDecoder gate;
  int batches = 0;  // Only touched by the worker thread.
  RequestBatcher batcher(
      Options(2, 8, std::chrono::milliseconds(1000)),
      [&](const std::vector<EncodedSource>& sources)
          -> std::vector<std::vector<int64_t>> {
        if (++batches == 2) throw std::runtime_error("model exploded");
        return std::vector<std::vector<int64_t>>(sources.size(),
                                                 std::vector<int64_t>{1});
      },
      nullptr);
  // Batch 1: two requests (flushed by size). Batch 2: two requests, which
  // throw. Batch 3: two requests, fine again.
  std::vector<std::promise<Outcome>> outcomes(6);
  std::vector<std::future<Outcome>> futures;
  for (auto& outcome : outcomes) futures.push_back(outcome.get_future());
  for (int batch = 0; batch < 3; ++batch) {
    batcher.Submit(Source({1}), kNoDeadline, Fulfil(outcomes[2 * batch]));
    batcher.Submit(Source({1}), kNoDeadline, Fulfil(outcomes[2 * batch + 1]));
    // Wait for this batch to finish so batches don't mix.
    futures[2 * batch].wait();
    futures[2 * batch + 1].wait();
  }
  const std::vector<grpc::StatusCode> expected = {
      grpc::StatusCode::OK,       grpc::StatusCode::OK,
      grpc::StatusCode::INTERNAL, grpc::StatusCode::INTERNAL,
      grpc::StatusCode::OK,       grpc::StatusCode::OK};
  for (int i = 0; i < 6; ++i) {
    Outcome outcome = futures[i].get();
    EXPECT_EQ(outcome.code, expected[i]) << "request " << i;
    if (outcome.code == grpc::StatusCode::INTERNAL) {
      EXPECT_NE(outcome.message.find("model exploded"), std::string::npos);
    }
  }
}

TEST(RequestBatcherTest, RecordsMetrics) {
  prometheus::Registry registry;
  ServerMetrics metrics(registry);
  EchoDecoder decoder;
  RequestBatcher batcher(Options(2, 8, std::chrono::milliseconds(1000)),
                         decoder.Function(), &metrics);
  std::promise<Outcome> a, b;
  batcher.Submit(Source({1, 2, 3}), kNoDeadline, Fulfil(a));
  batcher.Submit(Source({4}), kNoDeadline, Fulfil(b));
  a.get_future().get();
  b.get_future().get();
  batcher.Stop();

  double batch_rows = -1, generated_tokens = -1, queue_waits = -1;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.metric.empty()) continue;
    const prometheus::ClientMetric& metric = family.metric.front();
    if (family.name == "fanyi_batch_size") {
      batch_rows = metric.histogram.sample_sum;
    } else if (family.name == "fanyi_generated_tokens_total") {
      generated_tokens = metric.counter.value;
    } else if (family.name == "fanyi_queue_wait_seconds") {
      queue_waits = static_cast<double>(metric.histogram.sample_count);
    }
  }
  EXPECT_EQ(batch_rows, 2);
  EXPECT_EQ(generated_tokens, 4);
  EXPECT_EQ(queue_waits, 2);
}

// The batcher in front of the real tiny model: batched decoding gives each
// request the same ids as decoding it alone.
TEST(RequestBatcherTest, RealModelBatchedResultsMatchSingleDecoding) {
  // Once per process: MakeTempDir empties the directory that TrainTinyModel
  // caches, so calling both again (e.g. --gtest_repeat) would lose the model.
  static const std::string* model_dir = new std::string(
      testing_util::TrainTinyModel(testing_util::MakeTempDir("batcher_model")));
  std::unique_ptr<Translator> translator =
      Translator::Load(*model_dir, TranslatorOptions{"cpu", 1});
  const std::vector<std::string> texts = {
      "hello", "I like tea.", "Where is the station?", "Thank you very much."};
  std::vector<EncodedSource> sources;
  std::vector<std::vector<int64_t>> expected;
  for (const std::string& text : texts) {
    sources.push_back(translator->EncodeSource(text));
    expected.push_back(translator->TranslateIds({sources.back()}).front());
  }

  std::vector<int> batch_sizes;  // Only touched by the worker thread.
  GatedDecoder gate;
  RequestBatcher::BatchFunction gated = gate.Function();
  RequestBatcher batcher(
      Options(8, 64, std::chrono::milliseconds(0)),
      [&](const std::vector<EncodedSource>& batch) {
        if (batch_sizes.empty()) gated(batch);
        batch_sizes.push_back(static_cast<int>(batch.size()));
        return translator->TranslateIds(batch);
      },
      nullptr);
  // Hold the first request at the gate until the rest have queued, so they
  // decode together as one batch.
  std::vector<std::promise<Outcome>> outcomes(texts.size() + 1);
  batcher.Submit(sources[0], kNoDeadline, Fulfil(outcomes[0]));
  gate.WaitUntilDecoding();
  for (size_t i = 0; i < texts.size(); ++i) {
    batcher.Submit(sources[i], kNoDeadline, Fulfil(outcomes[i + 1]));
  }
  gate.Release();
  EXPECT_EQ(outcomes[0].get_future().get().target_ids, expected[0]);
  for (size_t i = 0; i < texts.size(); ++i) {
    Outcome outcome = outcomes[i + 1].get_future().get();
    ASSERT_EQ(outcome.code, grpc::StatusCode::OK) << outcome.message;
    EXPECT_EQ(outcome.target_ids, expected[i]) << texts[i];
  }
  batcher.Stop();
  EXPECT_EQ(batch_sizes, (std::vector<int>{1, 4}));
}

}  // namespace
}  // namespace fanyi
