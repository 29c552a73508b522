#include "server/request_batcher.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "server/decode_worker.h"

namespace fanyi {
namespace {

// The options, checked; throws std::invalid_argument.
const BatcherOptions& Validated(const BatcherOptions& options,
                                const std::vector<DecodeEngine*>& engines) {
  if (options.max_batch_size < 1) {
    throw std::invalid_argument("max_batch_size must be at least 1, got " +
                                std::to_string(options.max_batch_size));
  }
  if (options.max_queue < 1) {
    throw std::invalid_argument("max_queue must be at least 1, got " +
                                std::to_string(options.max_queue));
  }
  if (options.max_batch_delay.count() < 0) {
    throw std::invalid_argument("max_batch_delay must not be negative");
  }
  if (engines.empty()) {
    throw std::invalid_argument("RequestBatcher needs a decode engine");
  }
  for (DecodeEngine* engine : engines) {
    if (engine == nullptr) {
      throw std::invalid_argument("RequestBatcher got a null decode engine");
    }
  }
  return options;
}

}  // namespace

RequestBatcher::RequestBatcher(const BatcherOptions& options,
                               const std::vector<DecodeEngine*>& engines,
                               ModelMetrics* metrics,
                               std::function<void()> on_engine_broken)
    : max_batch_size_(Validated(options, engines).max_batch_size),
      queue_(options, static_cast<int>(engines.size()), metrics) {
  try {
    for (size_t i = 0; i < engines.size(); ++i) {
      workers_.push_back(std::make_unique<DecodeWorker>(
          static_cast<int>(i), *engines[i], queue_, metrics, on_engine_broken));
    }
  } catch (...) {
    Stop();  // Joins the workers already started.
    throw;
  }
}

RequestBatcher::~RequestBatcher() { Stop(); }

void RequestBatcher::Submit(EncodedSource source,
                            std::chrono::system_clock::time_point deadline,
                            CancelledPredicate cancelled, DoneCallback done) {
  std::vector<PendingRequest> requests(1);
  requests[0].source = std::move(source);
  requests[0].deadline = deadline;
  requests[0].cancelled = std::move(cancelled);
  requests[0].done = std::move(done);
  const grpc::Status status = SubmitAll(requests);
  // On refusal the request is still here; answer it outside any lock.
  if (!status.ok()) CompleteRequest(requests[0], status);
}

grpc::Status RequestBatcher::SubmitAll(std::vector<PendingRequest>& requests) {
  for (const PendingRequest& request : requests) {
    if (request.rows() < 1 || request.rows() > max_batch_size_) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          "beam_size " + std::to_string(request.source.beam_size) +
              " needs more rows than a batch has (max_batch_size " +
              std::to_string(max_batch_size_) + ")");
    }
  }
  return queue_.Push(requests);
}

void RequestBatcher::Stop() {
  queue_.Stop();
  std::call_once(stop_once_, [this] {
    for (auto& worker : workers_) worker->Join();
  });
}

}  // namespace fanyi
