#ifndef FANYI_SERVER_REQUEST_BATCHER_H_
#define FANYI_SERVER_REQUEST_BATCHER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "grpcpp/support/status.h"
#include "server/request_queue.h"

namespace fanyi {

class DecodeEngine;
class DecodeWorker;
class ModelMetrics;

// Server-side continuous batching across concurrent requests (after Triton's
// dynamic batcher and CTranslate2's buffered translation wrapper, decoding as
// in Orca's iteration-level scheduling): a RequestQueue in front of one
// DecodeWorker per engine. Texts queue up; each worker decodes its rows one
// step at a time, admitting waiting texts between steps and answering each
// one as soon as its sentence ends. Each text's callback receives its own
// result or error.
class RequestBatcher {
 public:
  using DoneCallback = PendingRequest::DoneCallback;
  using CancelledPredicate = PendingRequest::CancelledPredicate;

  // Starts one worker per engine. The engines and `metrics` (which may be
  // null) must outlive this. `on_engine_broken` (may be empty) is called,
  // on a worker's thread, when an engine has failed
  // DecodeWorker::kMaxFailedSteps times in a row and its worker stopped.
  // Throws std::invalid_argument for invalid options, no engine or a null
  // one.
  RequestBatcher(const BatcherOptions& options,
                 const std::vector<DecodeEngine*>& engines,
                 ModelMetrics* metrics,
                 std::function<void()> on_engine_broken = {});
  // Stops (draining the queue) and joins the workers.
  ~RequestBatcher();

  RequestBatcher(const RequestBatcher&) = delete;
  RequestBatcher& operator=(const RequestBatcher&) = delete;

  // Queues `source` for decoding. `done` runs right away with
  // INVALID_ARGUMENT when its beam takes more rows than a batch has,
  // RESOURCE_EXHAUSTED when the queue is full or UNAVAILABLE once Stop() has
  // begun; with DEADLINE_EXCEEDED once `deadline` passes before the sentence
  // ends (it is dropped at the next step); with CANCELLED once `cancelled`
  // says so (likewise); with INTERNAL if the engine fails on it; otherwise
  // with the result.
  void Submit(EncodedSource source,
              std::chrono::system_clock::time_point deadline,
              CancelledPredicate cancelled, DoneCallback done);

  // Queues every request of `requests` or none: returns OK once all are
  // queued (and moved out), or the refusal (as Submit's) with the requests
  // left in `requests` and no callback run.
  grpc::Status SubmitAll(std::vector<PendingRequest>& requests);

  // Whether new texts are taken: not stopped, and a worker is left.
  bool Serving() { return queue_.Serving(); }

  // Rejects new requests with UNAVAILABLE, finishes every queued and
  // in-flight request, and joins the workers. Idempotent and thread-safe.
  void Stop();

 private:
  const int max_batch_size_;
  RequestQueue queue_;
  std::vector<std::unique_ptr<DecodeWorker>> workers_;  // Fixed once built.
  std::once_flag stop_once_;  // Makes Stop()'s joins happen once.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_REQUEST_BATCHER_H_
