#ifndef FANYI_SERVER_REQUEST_BATCHER_H_
#define FANYI_SERVER_REQUEST_BATCHER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/decoding/translator.h"
#include "grpcpp/support/status.h"

namespace fanyi {

class DecodeEngine;
class ServerMetrics;

// Settings for a RequestBatcher, validated by its constructor.
struct BatcherOptions {
  // Rows decoding at once per engine, at most. Default 32.
  int max_batch_size = 32;
  // While an engine has nothing to decode, how long the oldest queued
  // request may wait for others to start with it. Default 0: at once, since
  // requests arriving later join at the next step anyway.
  std::chrono::microseconds max_batch_delay{0};
  // Queued requests beyond this are rejected with RESOURCE_EXHAUSTED.
  // Default 1024.
  int max_queue = 1024;
};

// Server-side continuous batching across concurrent requests (after Triton's
// dynamic batcher and CTranslate2's buffered translation wrapper, decoding as
// in Orca's iteration-level scheduling): requests queue up, and one worker
// thread per decode engine decodes them one step at a time, admitting
// waiting requests between steps and answering each one as soon as its row
// ends, so a short request never waits for a long one. Beam search requests
// are decoded whole, between steps. Each request's callback receives its own
// result or error.
//
// With several engines (CTranslate2's inter_threads), the workers share one
// queue: an idle worker takes what is waiting, and a busy one takes no more
// than its fair share of all rows (queued and decoding, divided by the
// number of workers), so load spreads across them.
class RequestBatcher {
 public:
  // Completion of one request; called exactly once, on a worker thread or,
  // for a request rejected on submission, on the submitting thread.
  // `target_ids` is empty unless `status` is OK.
  using DoneCallback = std::function<void(const grpc::Status& status,
                                          std::vector<int64_t> target_ids)>;
  // True once the caller has given up on the request (e.g. the RPC was
  // cancelled); polled on a worker thread between steps. May be empty.
  using CancelledPredicate = std::function<bool()>;

  // Starts one worker thread per engine, which alone drives it. The engines
  // and `metrics` (which may be null) must outlive this. Throws
  // std::invalid_argument for invalid options, no engine or a null one.
  RequestBatcher(const BatcherOptions& options,
                 const std::vector<DecodeEngine*>& engines,
                 ServerMetrics* metrics);
  // Stops (draining the queue) and joins the workers.
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
  // in-flight request, and joins the workers. Idempotent and thread-safe.
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

  // One engine and the thread that drives it.
  struct Worker {
    explicit Worker(DecodeEngine* engine) : engine(engine) {}
    DecodeEngine* const engine;  // Not owned.
    // Rows decoding, by engine handle; touched by this worker's thread only.
    std::unordered_map<int64_t, Pending> in_flight;
    // in_flight.size() as of this worker's last visit to the queue, for the
    // others' fair share. Guarded by mutex_.
    size_t rows_seen = 0;
    std::thread thread;
  };

  // Worker thread body: admits and steps until stopped and drained.
  void Run(Worker& worker);
  // Blocks while `worker` has nothing to decode until a batch is due (full,
  // the oldest request's delay elapsed, or stopping) and moves it out of
  // the queue; empty when stopped and drained. Takes mutex_.
  std::vector<Pending> WaitForBatch(Worker& worker);
  // Moves queued requests out for `worker` without waiting: at most its
  // free rows and its fair share. Takes mutex_.
  std::vector<Pending> TakeWaiting(Worker& worker);
  // The above with mutex_ held.
  std::vector<Pending> TakeWaitingLocked(Worker& worker);
  // Updates the queue depth gauge; needs mutex_ held.
  void PublishQueueDepth();

  // The workers' steps; all run without mutex_ held, so submissions go on
  // while the model runs.
  // Answers expired or cancelled requests, decodes beam search ones whole
  // and adds greedy ones to the worker's rows.
  void Admit(Worker& worker, std::vector<Pending> requests);
  // Decodes beam search requests as one batch and answers them.
  void DecodeWhole(Worker& worker, std::vector<Pending> requests);
  // Adds greedy requests to the worker's rows.
  void AddRows(Worker& worker, std::vector<Pending> requests);
  // Drops rows whose deadline passed or whose caller cancelled.
  void DropAbandonedRows(Worker& worker);
  // Runs one decoding step and answers the rows that ended.
  void StepRows(Worker& worker);
  // Fails every row of `worker` with INTERNAL and resets its engine.
  void FailAllRows(Worker& worker, const std::string& message);
  // Answers `request` and records its decode time when it succeeded.
  void Finish(Pending& request, const grpc::Status& status,
              std::vector<int64_t> target_ids);
  // Calls `done`, never letting an exception escape into the worker.
  static void Complete(Pending& request, const grpc::Status& status,
                       std::vector<int64_t> target_ids);

  const BatcherOptions options_;
  ServerMetrics* const metrics_;  // May be null; not owned.

  std::mutex mutex_;
  // Signalled when a request is queued or stopping_ is set.
  std::condition_variable queue_changed_;
  std::deque<Pending> queue_;  // Guarded by mutex_.
  bool stopping_ = false;      // Guarded by mutex_.

  std::vector<std::unique_ptr<Worker>> workers_;  // Fixed after construction.

  std::once_flag stop_once_;  // Makes Stop()'s joins happen once.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_REQUEST_BATCHER_H_
