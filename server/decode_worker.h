#ifndef FANYI_SERVER_DECODE_WORKER_H_
#define FANYI_SERVER_DECODE_WORKER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "grpcpp/support/status.h"
#include "server/request_queue.h"

namespace fanyi {

class DecodeEngine;
class ModelMetrics;

// One decode engine and the thread that alone drives it (a Triton model
// instance): it takes texts from the RequestQueue between steps, drops those
// whose deadline passed or whose caller gave up, runs one step for all its
// rows and answers each text as soon as its sentence ends. Greedy and beam
// search texts share every step, so a short text never waits for a long
// one. After kMaxFailedSteps failures in a row it stops for good and calls
// `on_broken`, so that health checks report the model not serving.
class DecodeWorker {
 public:
  // Failures in a row (steps, additions or removals) after which an engine
  // counts as broken.
  static constexpr int kMaxFailedSteps = 3;

  // Starts the thread. `engine`, `queue` and `metrics` (which may be null)
  // must outlive the worker; `on_broken` (may be empty) is called on the
  // worker's thread.
  DecodeWorker(int index, DecodeEngine& engine, RequestQueue& queue,
               ModelMetrics* metrics, std::function<void()> on_broken);
  // Joins the thread: call RequestQueue::Stop() first, or this waits.
  ~DecodeWorker();

  DecodeWorker(const DecodeWorker&) = delete;
  DecodeWorker& operator=(const DecodeWorker&) = delete;

  // Waits until the thread has drained the queue and returned.
  void Join();

 private:
  // Thread body: admits and steps until stopped and drained, or broken.
  void Run();
  // Answers expired or cancelled texts and adds the others to the engine.
  void Admit(std::vector<PendingRequest> requests);
  // Drops sentences whose deadline passed or whose caller gave up.
  void DropAbandoned();
  // Runs one step and answers the sentences that ended.
  void StepRows();
  // Fails every text in flight with INTERNAL (the engine has dropped
  // them) and counts a failure; says whether the engine is now broken.
  bool FailAll(const std::string& message);
  // Counts a failure; true once there have been kMaxFailedSteps in a row.
  bool CountFailure();
  // Answers `request` and records its decode time when it succeeded.
  void Finish(PendingRequest& request, const grpc::Status& status,
              DecodedPart target);

  const int index_;
  DecodeEngine& engine_;
  RequestQueue& queue_;
  ModelMetrics* const metrics_;  // May be null; not owned.
  const std::function<void()> on_broken_;

  // Touched by the worker's thread only.
  std::unordered_map<int64_t, PendingRequest> in_flight_;  // By handle.
  int rows_ = 0;  // Engine rows of in_flight_.
  int failures_in_a_row_ = 0;
  bool broken_ = false;

  std::thread thread_;
};

// Answers `request` with `status`, never letting an exception from its
// callback escape.
void CompleteRequest(PendingRequest& request, const grpc::Status& status,
                     DecodedPart target = {});

}  // namespace fanyi

#endif  // FANYI_SERVER_DECODE_WORKER_H_
