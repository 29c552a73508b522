#include "server/request_batcher.h"

#include <algorithm>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <utility>

#include "server/decode_engine.h"
#include "server/server_metrics.h"

namespace fanyi {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// The message for an INTERNAL status; call only inside a catch block.
std::string CurrentFailure() {
  try {
    throw;
  } catch (const std::exception& e) {
    return std::string("translation failed: ") + e.what();
  } catch (...) {
    return "translation failed: unknown exception";
  }
}

// Asks `cancelled`; a predicate that throws counts as not cancelled, since
// the request can still be answered.
bool IsCancelled(const RequestBatcher::CancelledPredicate& cancelled) {
  if (!cancelled) return false;
  try {
    return cancelled();
  } catch (...) {
    return false;
  }
}

// True when `engine` holds other than `rows` rows, so some are owned by
// nobody (or asking fails).
bool EngineLostTrack(const DecodeEngine& engine, size_t rows) {
  try {
    return engine.active() != static_cast<int64_t>(rows);
  } catch (...) {
    return true;
  }
}

}  // namespace

RequestBatcher::RequestBatcher(const BatcherOptions& options,
                               const std::vector<DecodeEngine*>& engines,
                               ServerMetrics* metrics)
    : options_(options), metrics_(metrics) {
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
  if (engines.empty()) {
    throw std::invalid_argument("RequestBatcher needs a decode engine");
  }
  for (DecodeEngine* engine : engines) {
    if (engine == nullptr) {
      throw std::invalid_argument("RequestBatcher got a null decode engine");
    }
    workers_.push_back(std::make_unique<Worker>(engine));
  }
  try {
    for (auto& worker : workers_) {
      Worker* const w = worker.get();
      w->thread = std::thread([this, w] { Run(*w); });
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
  Pending request{std::move(source),
                  deadline,
                  std::move(cancelled),
                  std::move(done),
                  std::chrono::steady_clock::now(),
                  std::chrono::steady_clock::time_point()};
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
      PublishQueueDepth();
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
    for (auto& worker : workers_) {
      if (worker->thread.joinable()) worker->thread.join();
    }
  });
}

void RequestBatcher::Run(Worker& worker) {
  while (true) {
    // First, so that rows freed by expired or cancelled requests are
    // refilled in this same step.
    DropAbandonedRows(worker);
    if (worker.in_flight.empty()) {
      std::vector<Pending> batch = WaitForBatch(worker);
      if (batch.empty()) return;  // Stopped and drained.
      Admit(worker, std::move(batch));
    } else {
      // Rows are decoding: waiting would stall them, so take only the
      // requests already queued, into the free rows.
      Admit(worker, TakeWaiting(worker));
    }
    StepRows(worker);
  }
}

std::vector<RequestBatcher::Pending> RequestBatcher::WaitForBatch(
    Worker& worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  worker.rows_seen = 0;
  while (true) {
    queue_changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return {};  // Stopping and drained.

    // Wait for the batch to fill, but never keep the oldest request waiting
    // longer than max_batch_delay; when stopping, flush at once.
    const auto flush_at = queue_.front().enqueued + options_.max_batch_delay;
    const auto max_batch_size = static_cast<size_t>(options_.max_batch_size);
    queue_changed_.wait_until(lock, flush_at, [&] {
      return stopping_ || queue_.size() >= max_batch_size;
    });
    // Another worker may have taken everything meanwhile; then wait again.
    if (!queue_.empty()) break;
  }
  return TakeWaitingLocked(worker);
}

std::vector<RequestBatcher::Pending> RequestBatcher::TakeWaiting(
    Worker& worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  return TakeWaitingLocked(worker);
}

std::vector<RequestBatcher::Pending> RequestBatcher::TakeWaitingLocked(
    Worker& worker) {
  const size_t own = worker.in_flight.size();
  const auto max_rows = static_cast<size_t>(options_.max_batch_size);
  // Fair share: every row in the system, queued or decoding, spread evenly
  // over the workers (rounded up, so one worker alone takes everything).
  size_t rows = queue_.size() + own;
  for (const auto& other : workers_) {
    if (other.get() != &worker) rows += other->rows_seen;
  }
  const size_t share = (rows + workers_.size() - 1) / workers_.size();
  size_t count = std::min(queue_.size(), max_rows - std::min(max_rows, own));
  count = std::min(count, share - std::min(share, own));
  std::vector<Pending> taken;
  taken.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    taken.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  worker.rows_seen = own + count;
  if (count > 0) PublishQueueDepth();
  // Requests left beyond this worker's share go to an idle one, if any.
  if (!queue_.empty()) queue_changed_.notify_one();
  return taken;
}

void RequestBatcher::PublishQueueDepth() {
  if (metrics_ != nullptr) {
    metrics_->SetQueueDepth(static_cast<int>(queue_.size()));
  }
}

void RequestBatcher::Admit(Worker& worker, std::vector<Pending> requests) {
  const auto now = std::chrono::system_clock::now();
  const auto admitted = std::chrono::steady_clock::now();
  std::vector<Pending> greedy;
  std::vector<Pending> beam;
  for (Pending& request : requests) {
    request.admitted = admitted;
    if (metrics_ != nullptr) {
      metrics_->ObserveQueueWait(
          std::chrono::duration<double>(admitted - request.enqueued).count());
    }
    // Nobody is waiting for these results any more; don't spend the model on
    // them.
    if (request.deadline <= now) {
      Complete(request,
               grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                            "deadline passed while the request was queued"),
               {});
    } else if (IsCancelled(request.cancelled)) {
      Complete(request,
               grpc::Status(grpc::StatusCode::CANCELLED,
                            "request cancelled while queued"),
               {});
    } else if (request.source.beam_size > 1) {
      beam.push_back(std::move(request));
    } else {
      greedy.push_back(std::move(request));
    }
  }
  AddRows(worker, std::move(greedy));
  DecodeWhole(worker, std::move(beam));
}

void RequestBatcher::DecodeWhole(Worker& worker,
                                 std::vector<Pending> requests) {
  if (requests.empty()) return;
  // Sorting by source length keeps rows of similar length together, so
  // little of the batch is padding; results come back in this order.
  std::stable_sort(requests.begin(), requests.end(),
                   [](const Pending& a, const Pending& b) {
                     return a.source.ids.size() < b.source.ids.size();
                   });
  std::vector<EncodedSource> sources;
  sources.reserve(requests.size());
  for (const Pending& request : requests) sources.push_back(request.source);
  std::vector<std::vector<int64_t>> targets;
  try {
    targets = worker.engine->DecodeBatch(sources);
    if (targets.size() != sources.size()) {
      throw std::runtime_error(
          "decoder returned " + std::to_string(targets.size()) +
          " results for " + std::to_string(sources.size()) + " sources");
    }
  } catch (...) {
    const grpc::Status failure(grpc::StatusCode::INTERNAL, CurrentFailure());
    for (Pending& request : requests) Complete(request, failure, {});
    return;
  }
  if (metrics_ != nullptr) {
    metrics_->ObserveStep(static_cast<int>(requests.size()));
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    Finish(requests[i], grpc::Status::OK, std::move(targets[i]));
  }
}

void RequestBatcher::AddRows(Worker& worker, std::vector<Pending> requests) {
  if (requests.empty()) return;
  std::vector<EncodedSource> sources;
  sources.reserve(requests.size());
  for (const Pending& request : requests) sources.push_back(request.source);
  std::vector<int64_t> handles;
  try {
    handles = worker.engine->Add(sources);
    if (handles.size() != sources.size()) {
      throw std::runtime_error(
          "decoder returned " + std::to_string(handles.size()) +
          " handles for " + std::to_string(sources.size()) + " sources");
    }
  } catch (...) {
    const grpc::Status failure(grpc::StatusCode::INTERNAL, CurrentFailure());
    for (Pending& request : requests) Complete(request, failure, {});
    // The rows already decoding go on, unless the failure left the engine
    // holding rows nobody owns.
    if (EngineLostTrack(*worker.engine, worker.in_flight.size())) {
      FailAllRows(worker, "translation failed: decoder state lost after: " +
                              failure.error_message());
    }
    return;
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    worker.in_flight.emplace(handles[i], std::move(requests[i]));
  }
}

void RequestBatcher::DropAbandonedRows(Worker& worker) {
  const auto now = std::chrono::system_clock::now();
  std::vector<int64_t> handles;
  std::vector<Pending> dropped;
  std::vector<grpc::Status> statuses;
  for (auto it = worker.in_flight.begin(); it != worker.in_flight.end();) {
    Pending& request = it->second;
    if (request.deadline <= now) {
      statuses.emplace_back(grpc::StatusCode::DEADLINE_EXCEEDED,
                            "deadline passed during decoding");
    } else if (IsCancelled(request.cancelled)) {
      statuses.emplace_back(grpc::StatusCode::CANCELLED,
                            "request cancelled during decoding");
    } else {
      ++it;
      continue;
    }
    handles.push_back(it->first);
    dropped.push_back(std::move(request));
    it = worker.in_flight.erase(it);
  }
  if (handles.empty()) return;
  // The rows leave the engine before their callers hear back.
  std::string failure;
  try {
    worker.engine->Remove(handles);
  } catch (...) {
    failure = CurrentFailure();
  }
  for (size_t i = 0; i < dropped.size(); ++i) {
    Complete(dropped[i], statuses[i], {});
  }
  if (!failure.empty()) FailAllRows(worker, failure);
}

void RequestBatcher::StepRows(Worker& worker) {
  if (worker.in_flight.empty()) return;
  if (metrics_ != nullptr) {
    metrics_->ObserveStep(static_cast<int>(worker.in_flight.size()));
  }
  std::vector<DecodeEngine::Finished> finished;
  try {
    finished = worker.engine->Step();
  } catch (...) {
    FailAllRows(worker, CurrentFailure());
    return;
  }
  for (DecodeEngine::Finished& row : finished) {
    auto it = worker.in_flight.find(row.handle);
    if (it == worker.in_flight.end()) continue;  // Not a row of ours.
    Pending request = std::move(it->second);
    worker.in_flight.erase(it);
    Finish(request, grpc::Status::OK, std::move(row.target_ids));
  }
}

void RequestBatcher::FailAllRows(Worker& worker, const std::string& message) {
  const grpc::Status failure(grpc::StatusCode::INTERNAL, message);
  for (auto& [handle, request] : worker.in_flight) {
    Complete(request, failure, {});
  }
  worker.in_flight.clear();
  try {
    worker.engine->Reset();
  } catch (const std::exception& e) {
    std::cerr << "fanyi: resetting the decode engine failed: " << e.what()
              << "\n";
  } catch (...) {
    std::cerr << "fanyi: resetting the decode engine failed\n";
  }
}

void RequestBatcher::Finish(Pending& request, const grpc::Status& status,
                            std::vector<int64_t> target_ids) {
  if (status.ok() && metrics_ != nullptr) {
    metrics_->ObserveDecode(SecondsSince(request.admitted),
                            static_cast<int>(target_ids.size()));
  }
  Complete(request, status, std::move(target_ids));
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
