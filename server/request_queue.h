#ifndef FANYI_SERVER_REQUEST_QUEUE_H_
#define FANYI_SERVER_REQUEST_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "common/pipeline/text_translation.h"
#include "grpcpp/support/status.h"

namespace fanyi {

class ModelMetrics;

// Settings for a RequestBatcher, validated by its constructor.
struct BatcherOptions {
  // Rows decoding at once per engine, at most: a greedy text is one row, a
  // beam search text beam_size rows. Default 32.
  int max_batch_size = 32;
  // While an engine has nothing to decode, how long the oldest queued
  // request may wait for others to start with it. Default 0: at once, since
  // requests arriving later join at the next step anyway.
  std::chrono::microseconds max_batch_delay{0};
  // Queued parts (sentences and clauses of texts) beyond this are rejected
  // with RESOURCE_EXHAUSTED. Default 1024.
  int max_queue = 1024;
};

// One text, queued or decoding.
struct PendingRequest {
  // Completion; called exactly once. `target` is empty unless `status` is
  // OK.
  using DoneCallback =
      std::function<void(const grpc::Status& status, DecodedPart target)>;
  // True once the caller has given up on the request (the RPC was cancelled,
  // or a sibling text of its batch failed); polled between steps. May be
  // empty.
  using CancelledPredicate = std::function<bool()>;

  EncodedSource source;
  std::chrono::system_clock::time_point deadline;
  CancelledPredicate cancelled;
  DoneCallback done;
  std::chrono::steady_clock::time_point enqueued;  // Set by Push.
  std::chrono::steady_clock::time_point admitted;  // Set on admission.

  // Decoder rows it takes.
  int rows() const { return source.beam_size; }
};

// The answer to a model's texts once none of its decode workers is left.
grpc::Status NoWorkerLeft();

// The queue in front of the decode workers and its admission policy (after
// Triton's dynamic batch scheduler): bounded in texts, admitted in rows. An
// idle worker waits for a batch (full, or the oldest text's max delay
// passed); a busy one takes, between steps, what fits in its free rows and
// its fair share of all rows (queued and decoding, divided by the workers
// still running), so load spreads across them. Thread-safe.
class RequestQueue {
 public:
  // For `workers` workers, numbered from 0. `metrics` may be null.
  RequestQueue(const BatcherOptions& options, int workers,
               ModelMetrics* metrics);

  // Queues all of `requests` or none (a TranslateBatch is admitted whole):
  // returns OK, or RESOURCE_EXHAUSTED when they do not all fit, UNAVAILABLE
  // once stopping or when no worker is left. On refusal the requests stay
  // in `requests` and none of their callbacks has run. When they do not
  // fit, the queued requests whose callers have given up (`cancelled`)
  // leave first, answered CANCELLED: a client that hung up holds no place.
  grpc::Status Push(std::vector<PendingRequest>& requests);

  // Refuses new requests from now on; workers drain what is queued.
  void Stop();

  // For idle `worker`: blocks until a batch is due and moves it out; empty
  // once stopping and drained.
  std::vector<PendingRequest> WaitForBatch(int worker);
  // For `worker` with `rows` rows decoding: moves out, without waiting, what
  // fits in its free rows and its fair share.
  std::vector<PendingRequest> TakeWaiting(int worker, int rows);

  // `worker` stops for good (its engine is broken). Once none is left,
  // the queued requests are handed back (to be failed) and new ones are
  // refused with UNAVAILABLE.
  std::vector<PendingRequest> RemoveWorker(int worker);

  // Whether new requests are taken: not stopping, and a worker is left.
  bool Serving();

 private:
  // Moves out what `worker` may take with `rows` rows decoding; needs
  // mutex_ held.
  std::vector<PendingRequest> TakeLocked(int worker, int rows);
  // Moves out the queued requests whose `cancelled` says so; needs mutex_
  // held.
  std::vector<PendingRequest> RemoveAbandonedLocked();
  // Workers that have not stopped for good; needs mutex_ held.
  int WorkersLeftLocked() const;
  // Updates the queue depth gauge; needs mutex_ held.
  void PublishDepth();

  const BatcherOptions options_;
  ModelMetrics* const metrics_;  // May be null; not owned.

  std::mutex mutex_;
  // Signalled when requests are queued, stopping_ is set or workers leave.
  std::condition_variable changed_;
  std::deque<PendingRequest> queue_;  // Guarded by mutex_.
  int queued_rows_ = 0;               // Guarded by mutex_: rows of queue_.
  // Guarded by mutex_: each worker's rows as of its last visit, -1 once it
  // has stopped for good.
  std::vector<int> rows_seen_;
  bool stopping_ = false;  // Guarded by mutex_.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_REQUEST_QUEUE_H_
