#ifndef FANYI_SERVER_REQUEST_BATCHER_H_
#define FANYI_SERVER_REQUEST_BATCHER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/translator.h"
#include "grpcpp/support/status.h"

namespace fanyi {

class DecodeEngine;
class ServerMetrics;

// Settings for a RequestBatcher, validated by its constructor.
struct BatcherOptions {
  // Rows decoding at once, at most. Default 32.
  int max_batch_size = 32;
  // While nothing is decoding, how long the oldest queued request may wait
  // for others to start with it. Default 5 ms.
  std::chrono::microseconds max_batch_delay{5000};
  // Queued requests beyond this are rejected with RESOURCE_EXHAUSTED.
  // Default 1024.
  int max_queue = 1024;
};

// Server-side continuous batching across concurrent requests (after Triton's
// dynamic batcher and CTranslate2's buffered translation wrapper, decoding as
// in Orca's iteration-level scheduling): requests queue up, and one worker
// thread decodes them one step at a time, admitting waiting requests between
// steps and answering each one as soon as its row ends, so a short request
// never waits for a long one. Beam search requests are decoded whole, between
// steps. Each request's callback receives its own result or error.
class RequestBatcher {
 public:
  // Completion of one request; called exactly once, on the worker thread or,
  // for a request rejected on submission, on the submitting thread.
  // `target_ids` is empty unless `status` is OK.
  using DoneCallback = std::function<void(const grpc::Status& status,
                                          std::vector<int64_t> target_ids)>;
  // True once the caller has given up on the request (e.g. the RPC was
  // cancelled); polled on the worker thread between steps. May be empty.
  using CancelledPredicate = std::function<bool()>;

  // Starts the worker thread, which alone drives `engine`. `engine` and
  // `metrics` (which may be null) must outlive this. Throws
  // std::invalid_argument for invalid options or a null engine.
  RequestBatcher(const BatcherOptions& options, DecodeEngine* engine,
                 ServerMetrics* metrics);
  // Stops (draining the queue) and joins the worker.
  ~RequestBatcher();

  RequestBatcher(const RequestBatcher&) = delete;
  RequestBatcher& operator=(const RequestBatcher&) = delete;

  // Queues `source` for decoding. `done` runs right away with
  // RESOURCE_EXHAUSTED when the queue is full or UNAVAILABLE once Stop() has
  // begun; with DEADLINE_EXCEEDED once `deadline` passes before the row ends
  // (the row is dropped); with CANCELLED once `cancelled` says so (likewise);
  // with INTERNAL if the engine fails on its row; otherwise with the result.
  void Submit(EncodedSource source,
              std::chrono::system_clock::time_point deadline,
              CancelledPredicate cancelled, DoneCallback done);

  // Rejects new requests with UNAVAILABLE, finishes every queued and
  // in-flight request, and joins the worker. Idempotent and thread-safe.
  void Stop();

 private:
  // One request, queued or decoding.
  struct Pending {
    EncodedSource source;
    std::chrono::system_clock::time_point deadline;
    CancelledPredicate cancelled;
    DoneCallback done;
    std::chrono::steady_clock::time_point enqueued;
    std::chrono::steady_clock::time_point admitted;  // Set on admission.
  };

  // Worker thread body: admits and steps until stopped and drained.
  void Run();
  // Blocks while nothing is decoding until a batch is due (full, the oldest
  // request's delay elapsed, or stopping) and moves it out of the queue;
  // empty when stopped and drained. Takes mutex_.
  std::vector<Pending> WaitForBatch();
  // Moves up to `count` queued requests out without waiting. Takes mutex_.
  std::vector<Pending> TakeWaiting(size_t count);
  // Updates the queue depth gauge; needs mutex_ held.
  void PublishQueueDepth();

  // The worker's steps; all run without mutex_ held, so submissions go on
  // while the model runs.
  // Answers expired or cancelled requests, decodes beam search ones whole
  // and adds greedy ones to the engine's rows.
  void Admit(std::vector<Pending> requests);
  // Decodes beam search requests as one batch and answers them.
  void DecodeWhole(std::vector<Pending> requests);
  // Adds greedy requests to the engine's rows (in_flight_).
  void AddRows(std::vector<Pending> requests);
  // Drops rows whose deadline passed or whose caller cancelled.
  void DropAbandonedRows();
  // Runs one decoding step and answers the rows that ended.
  void StepRows();
  // Fails every row in flight with INTERNAL and resets the engine.
  void FailAllRows(const std::string& message);
  // Answers `request` and records its decode time when it succeeded.
  void Finish(Pending& request, const grpc::Status& status,
              std::vector<int64_t> target_ids);
  // Calls `done`, never letting an exception escape into the worker.
  static void Complete(Pending& request, const grpc::Status& status,
                       std::vector<int64_t> target_ids);

  const BatcherOptions options_;
  DecodeEngine* const engine_;    // Not owned; used by the worker only.
  ServerMetrics* const metrics_;  // May be null; not owned.

  std::mutex mutex_;
  // Signalled when a request is queued or stopping_ is set.
  std::condition_variable queue_changed_;
  std::deque<Pending> queue_;  // Guarded by mutex_.
  bool stopping_ = false;      // Guarded by mutex_.

  // Rows decoding, by engine handle. Touched by the worker thread only, so
  // it needs no lock.
  std::unordered_map<int64_t, Pending> in_flight_;

  std::once_flag stop_once_;  // Makes Stop()'s join happen once.
  std::thread worker_;        // Joined by Stop().
};

}  // namespace fanyi

#endif  // FANYI_SERVER_REQUEST_BATCHER_H_
