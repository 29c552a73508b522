#include "server/request_queue.h"

#include <algorithm>
#include <string>
#include <utility>

#include "server/decode_worker.h"
#include "server/server_metrics.h"

namespace fanyi {

grpc::Status NoWorkerLeft() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                      "no decode engine of this model is working; it serves "
                      "again once a new version is loaded or the server is "
                      "restarted");
}

RequestQueue::RequestQueue(const BatcherOptions& options, int workers,
                           ModelMetrics* metrics)
    : options_(options), metrics_(metrics), rows_seen_(workers, 0) {}

grpc::Status RequestQueue::Push(std::vector<PendingRequest>& requests) {
  const auto now = std::chrono::steady_clock::now();
  std::vector<PendingRequest> abandoned;
  grpc::Status status;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          "server is shutting down");
    }
    if (WorkersLeftLocked() == 0) return NoWorkerLeft();
    const auto fits = [&] {
      return queue_.size() + requests.size() <=
             static_cast<size_t>(options_.max_queue);
    };
    // Texts whose callers have gone (a cancelled RPC, a closed connection)
    // make room before anyone is refused.
    if (!fits()) abandoned = RemoveAbandonedLocked();
    if (!fits()) {
      status = grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          "request queue is full (" + std::to_string(options_.max_queue) +
              " sentences and clauses waiting at most, " +
              std::to_string(queue_.size()) + " now); retry later");
    } else {
      for (PendingRequest& request : requests) {
        request.enqueued = now;
        queued_rows_ += request.rows();
        queue_.push_back(std::move(request));
      }
      requests.clear();
    }
    PublishDepth();
  }
  for (PendingRequest& request : abandoned) {
    CompleteRequest(request, grpc::Status(grpc::StatusCode::CANCELLED,
                                          "request cancelled while queued"));
  }
  if (status.ok()) changed_.notify_one();
  return status;
}

std::vector<PendingRequest> RequestQueue::RemoveAbandonedLocked() {
  std::vector<PendingRequest> abandoned;
  std::deque<PendingRequest> kept;
  for (PendingRequest& request : queue_) {
    bool cancelled = false;
    try {
      cancelled = request.cancelled && request.cancelled();
    } catch (...) {
      // A predicate that throws counts as not cancelled (as the workers
      // read it).
    }
    if (cancelled) {
      queued_rows_ -= request.rows();
      abandoned.push_back(std::move(request));
    } else {
      kept.push_back(std::move(request));
    }
  }
  queue_ = std::move(kept);
  return abandoned;
}

void RequestQueue::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
}

std::vector<PendingRequest> RequestQueue::WaitForBatch(int worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  rows_seen_[worker] = 0;
  while (true) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return {};  // Stopping and drained.

    // Wait for the batch to fill, but never keep the oldest request waiting
    // longer than max_batch_delay; when stopping, flush at once.
    const auto flush_at = queue_.front().enqueued + options_.max_batch_delay;
    changed_.wait_until(lock, flush_at, [&] {
      return stopping_ || queue_.empty() ||
             queued_rows_ >= options_.max_batch_size;
    });
    // Another worker may have taken everything meanwhile; then wait again.
    if (!queue_.empty()) break;
  }
  return TakeLocked(worker, 0);
}

std::vector<PendingRequest> RequestQueue::TakeWaiting(int worker, int rows) {
  std::lock_guard<std::mutex> lock(mutex_);
  return TakeLocked(worker, rows);
}

std::vector<PendingRequest> RequestQueue::RemoveWorker(int worker) {
  std::vector<PendingRequest> orphans;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (rows_seen_[worker] < 0) return orphans;
    rows_seen_[worker] = -1;
    if (WorkersLeftLocked() > 0) return orphans;
    for (PendingRequest& request : queue_)
      orphans.push_back(std::move(request));
    queue_.clear();
    queued_rows_ = 0;
    PublishDepth();
  }
  changed_.notify_all();
  return orphans;
}

std::vector<PendingRequest> RequestQueue::TakeLocked(int worker, int rows) {
  // Fair share: every row in the system, queued or decoding, spread evenly
  // over the running workers (rounded up, so one worker alone takes
  // everything).
  int all_rows = queued_rows_ + rows;
  for (size_t other = 0; other < rows_seen_.size(); ++other) {
    if (static_cast<int>(other) != worker && rows_seen_[other] > 0) {
      all_rows += rows_seen_[other];
    }
  }
  const int workers = WorkersLeftLocked();
  const int share = (all_rows + workers - 1) / workers;
  const int limit = std::min(options_.max_batch_size, std::max(share, 1));
  std::vector<PendingRequest> taken;
  int taken_rows = 0;
  // In arrival order, stopping at the first text that does not fit, so a
  // beam search text is not passed over for ever by greedy ones. An idle
  // worker always takes the oldest text (no text has more rows than
  // max_batch_size).
  while (!queue_.empty()) {
    const int next = queue_.front().rows();
    const bool idle = rows + taken_rows == 0;
    if (!idle && rows + taken_rows + next > limit) break;
    taken_rows += next;
    queued_rows_ -= next;
    taken.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  rows_seen_[worker] = rows + taken_rows;
  if (!taken.empty()) PublishDepth();
  // Requests left beyond this worker's share go to an idle one, if any.
  if (!queue_.empty()) changed_.notify_one();
  return taken;
}

bool RequestQueue::Serving() {
  std::lock_guard<std::mutex> lock(mutex_);
  return !stopping_ && WorkersLeftLocked() > 0;
}

int RequestQueue::WorkersLeftLocked() const {
  return static_cast<int>(std::count_if(rows_seen_.begin(), rows_seen_.end(),
                                        [](int rows) { return rows >= 0; }));
}

void RequestQueue::PublishDepth() {
  if (metrics_ != nullptr) {
    metrics_->SetQueueDepth(static_cast<int>(queue_.size()));
  }
}

}  // namespace fanyi
