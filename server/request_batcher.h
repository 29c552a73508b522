#ifndef FANYI_SERVER_REQUEST_BATCHER_H_
#define FANYI_SERVER_REQUEST_BATCHER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "common/translator.h"
#include "grpcpp/support/status.h"

namespace fanyi {

class ServerMetrics;

// Settings for a RequestBatcher, validated by its constructor.
struct BatcherOptions {
  // Rows per decoded batch, at most. Default 32.
  int max_batch_size = 32;
  // How long the oldest queued request may wait for others to join its
  // batch. Default 5 ms.
  std::chrono::microseconds max_batch_delay{5000};
  // Queued requests beyond this are rejected with RESOURCE_EXHAUSTED.
  // Default 1024.
  int max_queue = 1024;
};

// Server-side dynamic batching across concurrent requests (after Triton's
// dynamic batcher and CTranslate2's buffered translation wrapper): requests
// queue up, one worker thread forms batches and runs the decode step on them,
// and each request's callback receives its own result or error.
class RequestBatcher {
 public:
  // The decode step: target ids for each source, in the order given. May
  // throw; the exception then fails that batch's requests with INTERNAL.
  using BatchFunction = std::function<std::vector<std::vector<int64_t>>(
      const std::vector<EncodedSource>& sources)>;
  // Completion of one request; called exactly once, on the worker thread or,
  // for a request rejected on submission, on the submitting thread.
  // `target_ids` is empty unless `status` is OK.
  using DoneCallback = std::function<void(const grpc::Status& status,
                                          std::vector<int64_t> target_ids)>;

  // Starts the worker thread. `metrics` may be null; otherwise it must
  // outlive this. Throws std::invalid_argument for invalid options.
  RequestBatcher(const BatcherOptions& options, BatchFunction batch_function,
                 ServerMetrics* metrics);
  // Stops (draining the queue) and joins the worker.
  ~RequestBatcher();

  RequestBatcher(const RequestBatcher&) = delete;
  RequestBatcher& operator=(const RequestBatcher&) = delete;

  // Queues `source` for decoding. `done` runs right away with
  // RESOURCE_EXHAUSTED when the queue is full or UNAVAILABLE once Stop() has
  // begun; with DEADLINE_EXCEEDED, without decoding, if `deadline` passes
  // before its batch runs; otherwise with the decode result.
  void Submit(EncodedSource source,
              std::chrono::system_clock::time_point deadline,
              DoneCallback done);

  // Rejects new requests with UNAVAILABLE, finishes every queued and
  // in-flight request, and joins the worker. Idempotent and thread-safe.
  void Stop();

 private:
  // One queued request.
  struct Pending {
    EncodedSource source;
    std::chrono::system_clock::time_point deadline;
    std::chrono::steady_clock::time_point enqueued;
    DoneCallback done;
  };

  // Worker thread body: forms batches until stopped and drained.
  void Run();
  // Blocks until a batch is due (full, the oldest request's delay elapsed, or
  // stopping) and moves it out of the queue; empty when stopped and drained.
  std::vector<Pending> TakeBatch();
  // Fails expired requests, decodes the rest sorted by length and completes
  // them all. Runs without mutex_ held.
  void RunBatch(std::vector<Pending> batch);
  // Calls `done`, never letting an exception escape into the worker.
  static void Complete(Pending& request, const grpc::Status& status,
                       std::vector<int64_t> target_ids);

  const BatcherOptions options_;
  const BatchFunction batch_function_;
  ServerMetrics* const metrics_;  // May be null; not owned.

  std::mutex mutex_;
  // Signalled when a request is queued or stopping_ is set.
  std::condition_variable queue_changed_;
  std::deque<Pending> queue_;  // Guarded by mutex_.
  bool stopping_ = false;      // Guarded by mutex_.

  std::once_flag stop_once_;  // Makes Stop()'s join happen once.
  std::thread worker_;        // Joined by Stop().
};

}  // namespace fanyi

#endif  // FANYI_SERVER_REQUEST_BATCHER_H_
