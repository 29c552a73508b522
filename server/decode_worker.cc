#include "server/decode_worker.h"

#include <chrono>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "server/decode_engine.h"
#include "server/server_metrics.h"

namespace fanyi {
namespace {

// Longest engine error message a client sees; the whole of it goes to the
// log.
constexpr size_t kMaxClientMessage = 200;

// The message for an INTERNAL status; call only inside a catch block. Only
// the first line reaches the client: LibTorch appends a C++ backtrace to its
// errors, which tells a caller nothing and the world about the server.
std::string CurrentFailure() {
  std::string what;
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "unknown exception";
  }
  std::cerr << "fanyi: decoding failed: " << what << "\n";
  std::string message = what.substr(0, what.find('\n'));
  if (message.size() > kMaxClientMessage) {
    message = message.substr(0, kMaxClientMessage) + "...";
  }
  return "translation failed: " + message;
}

// Asks `cancelled`; a predicate that throws counts as not cancelled, since
// the request can still be answered.
bool IsCancelled(const PendingRequest::CancelledPredicate& cancelled) {
  if (!cancelled) return false;
  try {
    return cancelled();
  } catch (...) {
    return false;
  }
}

// gRPC cancels a call when its deadline passes, on its own monotonic
// timer; the deadline read back from the call is converted to the system
// clock and can come a few milliseconds after that moment. A cancellation
// that close to the deadline is the deadline passing, and is reported so.
constexpr std::chrono::milliseconds kDeadlineClockSlack{20};

// Why `request` is no longer wanted at `now`, or OK while it still is;
// `when` says where it was ("while queued", "during decoding").
grpc::Status Abandoned(const PendingRequest& request,
                       std::chrono::system_clock::time_point now,
                       const std::string& when) {
  const grpc::Status deadline_passed(grpc::StatusCode::DEADLINE_EXCEEDED,
                                     "deadline passed " + when);
  if (request.deadline <= now) return deadline_passed;
  if (!IsCancelled(request.cancelled)) return grpc::Status::OK;
  if (request.deadline <= now + kDeadlineClockSlack) return deadline_passed;
  return grpc::Status(grpc::StatusCode::CANCELLED, "request cancelled " + when);
}

}  // namespace

void CompleteRequest(PendingRequest& request, const grpc::Status& status,
                     DecodedPart target) {
  try {
    request.done(status, std::move(target));
  } catch (const std::exception& e) {
    // A throwing callback must not take the worker (and the process) down.
    std::cerr << "fanyi: request completion callback threw: " << e.what()
              << "\n";
  } catch (...) {
    std::cerr << "fanyi: request completion callback threw\n";
  }
}

DecodeWorker::DecodeWorker(int index, DecodeEngine& engine, RequestQueue& queue,
                           ModelMetrics* metrics,
                           std::function<void()> on_broken)
    : index_(index),
      engine_(engine),
      queue_(queue),
      metrics_(metrics),
      on_broken_(std::move(on_broken)),
      thread_([this] { Run(); }) {}

DecodeWorker::~DecodeWorker() { Join(); }

void DecodeWorker::Join() {
  if (thread_.joinable()) thread_.join();
}

void DecodeWorker::Run() {
  while (!broken_) {
    // First, so that rows freed by expired or cancelled requests are
    // refilled in this same step.
    DropAbandoned();
    if (broken_) break;
    if (in_flight_.empty()) {
      std::vector<PendingRequest> batch = queue_.WaitForBatch(index_);
      if (batch.empty()) return;  // Stopped and drained.
      Admit(std::move(batch));
    } else {
      // Rows are decoding: waiting would stall them, so take only the
      // requests already queued, into the free rows.
      Admit(queue_.TakeWaiting(index_, rows_));
    }
    StepRows();
  }
  std::cerr << "fanyi: decode worker " << index_ << " stopped after "
            << kMaxFailedSteps << " failures in a row\n";
  const grpc::Status unavailable = NoWorkerLeft();
  for (PendingRequest& request : queue_.RemoveWorker(index_)) {
    CompleteRequest(request, unavailable);
  }
  // Once removed, so that whoever listens sees the queue as it is now.
  if (on_broken_) on_broken_();
}

void DecodeWorker::Admit(std::vector<PendingRequest> requests) {
  const auto now = std::chrono::system_clock::now();
  const auto admitted = std::chrono::steady_clock::now();
  std::vector<PendingRequest> accepted;
  std::vector<EncodedSource> sources;
  for (PendingRequest& request : requests) {
    request.admitted = admitted;
    if (metrics_ != nullptr) {
      metrics_->ObserveQueueWait(
          std::chrono::duration<double>(admitted - request.enqueued).count());
    }
    // Nobody is waiting for these results any more; don't spend the model on
    // them.
    if (grpc::Status abandoned = Abandoned(request, now, "while queued");
        !abandoned.ok()) {
      CompleteRequest(request, abandoned);
    } else {
      sources.push_back(request.source);
      accepted.push_back(std::move(request));
    }
  }
  if (accepted.empty()) return;
  std::vector<int64_t> handles;
  try {
    handles = engine_.Add(sources);
    if (handles.size() != sources.size()) {
      throw std::runtime_error(
          "decoder returned " + std::to_string(handles.size()) +
          " handles for " + std::to_string(sources.size()) + " sources");
    }
  } catch (...) {
    // The engine added nothing; the rows already decoding go on.
    const grpc::Status failure(grpc::StatusCode::INTERNAL, CurrentFailure());
    for (PendingRequest& request : accepted) CompleteRequest(request, failure);
    broken_ = CountFailure();
    return;
  }
  for (size_t i = 0; i < accepted.size(); ++i) {
    rows_ += accepted[i].rows();
    in_flight_.emplace(handles[i], std::move(accepted[i]));
  }
}

void DecodeWorker::DropAbandoned() {
  const auto now = std::chrono::system_clock::now();
  std::vector<int64_t> handles;
  std::vector<PendingRequest> dropped;
  std::vector<grpc::Status> statuses;
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    PendingRequest& request = it->second;
    grpc::Status abandoned = Abandoned(request, now, "during decoding");
    if (abandoned.ok()) {
      ++it;
      continue;
    }
    statuses.push_back(std::move(abandoned));
    handles.push_back(it->first);
    rows_ -= request.rows();
    dropped.push_back(std::move(request));
    it = in_flight_.erase(it);
  }
  if (handles.empty()) return;
  // The sentences leave the engine before their callers hear back.
  std::string failure;
  try {
    engine_.Remove(handles);
  } catch (...) {
    failure = CurrentFailure();
  }
  for (size_t i = 0; i < dropped.size(); ++i) {
    CompleteRequest(dropped[i], statuses[i]);
  }
  if (!failure.empty()) broken_ = FailAll(failure);
}

void DecodeWorker::StepRows() {
  if (in_flight_.empty()) return;
  if (metrics_ != nullptr) metrics_->ObserveStep(rows_);
  std::vector<DecodeEngine::Finished> finished;
  try {
    finished = engine_.Step();
  } catch (...) {
    broken_ = FailAll(CurrentFailure());
    return;
  }
  failures_in_a_row_ = 0;
  for (DecodeEngine::Finished& sentence : finished) {
    auto it = in_flight_.find(sentence.handle);
    if (it == in_flight_.end()) continue;  // Not a sentence of ours.
    PendingRequest request = std::move(it->second);
    in_flight_.erase(it);
    rows_ -= request.rows();
    Finish(request, grpc::Status::OK, std::move(sentence));
  }
}

bool DecodeWorker::FailAll(const std::string& message) {
  const grpc::Status failure(grpc::StatusCode::INTERNAL, message);
  for (auto& [handle, request] : in_flight_) CompleteRequest(request, failure);
  in_flight_.clear();
  rows_ = 0;
  return CountFailure();
}

bool DecodeWorker::CountFailure() {
  return ++failures_in_a_row_ >= kMaxFailedSteps;
}

void DecodeWorker::Finish(PendingRequest& request, const grpc::Status& status,
                          DecodedPart target) {
  if (status.ok() && metrics_ != nullptr) {
    metrics_->ObserveDecode(
        std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                      request.admitted)
            .count(),
        static_cast<int>(target.target_ids.size()));
  }
  CompleteRequest(request, status, std::move(target));
}

}  // namespace fanyi
