#include "server/request_batcher.h"

#include <algorithm>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <utility>

#include "server/server_metrics.h"

namespace fanyi {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

RequestBatcher::RequestBatcher(const BatcherOptions& options,
                               BatchFunction batch_function,
                               ServerMetrics* metrics)
    : options_(options),
      batch_function_(std::move(batch_function)),
      metrics_(metrics) {
  if (options_.max_batch_size < 1) {
    throw std::invalid_argument("max_batch_size must be at least 1, got " +
                                std::to_string(options_.max_batch_size));
  }
  if (options_.max_queue < 1) {
    throw std::invalid_argument("max_queue must be at least 1, got " +
                                std::to_string(options_.max_queue));
  }
  if (options_.max_batch_delay.count() < 0) {
    throw std::invalid_argument("max_batch_delay must not be negative");
  }
  if (!batch_function_) {
    throw std::invalid_argument("RequestBatcher needs a batch function");
  }
  worker_ = std::thread([this] { Run(); });
}

RequestBatcher::~RequestBatcher() { Stop(); }

void RequestBatcher::Submit(EncodedSource source,
                            std::chrono::system_clock::time_point deadline,
                            DoneCallback done) {
  Pending request{std::move(source), deadline, std::chrono::steady_clock::now(),
                  std::move(done)};
  grpc::Status rejection;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      rejection = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                               "server is shutting down");
    } else if (static_cast<int>(queue_.size()) >= options_.max_queue) {
      rejection = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                               "request queue is full (" +
                                   std::to_string(options_.max_queue) +
                                   " waiting); retry later");
    } else {
      queue_.push_back(std::move(request));
      if (metrics_ != nullptr) {
        metrics_->SetQueueDepth(static_cast<int>(queue_.size()));
      }
    }
  }
  if (!rejection.ok()) {
    // Outside the lock: the callback may do arbitrary work.
    Complete(request, rejection, {});
    return;
  }
  queue_changed_.notify_one();
}

void RequestBatcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queue_changed_.notify_all();
  std::call_once(stop_once_, [this] {
    if (worker_.joinable()) worker_.join();
  });
}

void RequestBatcher::Run() {
  while (true) {
    std::vector<Pending> batch = TakeBatch();
    if (batch.empty()) return;
    RunBatch(std::move(batch));
  }
}

std::vector<RequestBatcher::Pending> RequestBatcher::TakeBatch() {
  std::unique_lock<std::mutex> lock(mutex_);
  queue_changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  if (queue_.empty()) return {};  // Stopping and drained.

  // Wait for the batch to fill, but never keep the oldest request waiting
  // longer than max_batch_delay; when stopping, flush at once.
  const auto flush_at = queue_.front().enqueued + options_.max_batch_delay;
  const auto max_batch_size = static_cast<size_t>(options_.max_batch_size);
  queue_changed_.wait_until(lock, flush_at, [&] {
    return stopping_ || queue_.size() >= max_batch_size;
  });

  const size_t count = std::min(queue_.size(), max_batch_size);
  std::vector<Pending> batch;
  batch.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    batch.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  if (metrics_ != nullptr) {
    metrics_->SetQueueDepth(static_cast<int>(queue_.size()));
  }
  return batch;
}

void RequestBatcher::RunBatch(std::vector<Pending> batch) {
  const auto now = std::chrono::system_clock::now();
  std::vector<Pending*> live;
  live.reserve(batch.size());
  for (Pending& request : batch) {
    if (metrics_ != nullptr) {
      metrics_->ObserveQueueWait(SecondsSince(request.enqueued));
    }
    if (request.deadline <= now) {
      // Nobody is waiting for this result any more; don't spend the model on
      // it.
      Complete(request,
               grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                            "deadline passed while the request was queued"),
               {});
    } else {
      live.push_back(&request);
    }
  }
  if (live.empty()) return;

  // Sorting by source length keeps rows of similar length together, so
  // little of the batch is padding; results are routed back by index.
  std::stable_sort(live.begin(), live.end(),
                   [](const Pending* a, const Pending* b) {
                     return a->source.ids.size() < b->source.ids.size();
                   });
  std::vector<EncodedSource> sources;
  sources.reserve(live.size());
  for (Pending* request : live) sources.push_back(request->source);

  std::vector<std::vector<int64_t>> targets;
  const auto decode_start = std::chrono::steady_clock::now();
  try {
    targets = batch_function_(sources);
    if (targets.size() != sources.size()) {
      throw std::runtime_error(
          "decoder returned " + std::to_string(targets.size()) +
          " results for " + std::to_string(sources.size()) + " sources");
    }
  } catch (const std::exception& e) {
    const grpc::Status failure(grpc::StatusCode::INTERNAL,
                               std::string("translation failed: ") + e.what());
    for (Pending* request : live) Complete(*request, failure, {});
    return;
  } catch (...) {
    const grpc::Status failure(grpc::StatusCode::INTERNAL,
                               "translation failed: unknown exception");
    for (Pending* request : live) Complete(*request, failure, {});
    return;
  }
  if (metrics_ != nullptr) {
    int generated_tokens = 0;
    for (const auto& target : targets) {
      generated_tokens += static_cast<int>(target.size());
    }
    metrics_->ObserveBatch(SecondsSince(decode_start),
                           static_cast<int>(live.size()), generated_tokens);
  }
  for (size_t i = 0; i < live.size(); ++i) {
    Complete(*live[i], grpc::Status::OK, std::move(targets[i]));
  }
}

void RequestBatcher::Complete(Pending& request, const grpc::Status& status,
                              std::vector<int64_t> target_ids) {
  try {
    request.done(status, std::move(target_ids));
  } catch (const std::exception& e) {
    // A throwing callback must not take the worker (and the process) down.
    std::cerr << "fanyi: request completion callback threw: " << e.what()
              << "\n";
  } catch (...) {
    std::cerr << "fanyi: request completion callback threw\n";
  }
}

}  // namespace fanyi
