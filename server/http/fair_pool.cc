#include "server/http/fair_pool.h"

#include <stdexcept>
#include <utility>

namespace fanyi {

FairPool::FairPool(int threads, int max_waiting, int max_client_waiting)
    : max_waiting_(max_waiting),
      max_client_waiting_(max_client_waiting),
      max_client_running_((threads + 1) / 2) {
  if (threads < 1 || max_waiting < 1 || max_client_waiting < 1) {
    throw std::invalid_argument(
        "a fair pool needs at least 1 thread and room for 1 waiting task "
        "in all and per client, not " +
        std::to_string(threads) + ", " + std::to_string(max_waiting) +
        " and " + std::to_string(max_client_waiting));
  }
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

FairPool::~FairPool() {
  StopTaking();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

FairPool::Outcome FairPool::TryPost(const std::string& client,
                                    std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!taking_) return Outcome::kStopped;
  if (waiting_ >= max_waiting_) return Outcome::kFull;
  Client& entry = clients_[client];
  if (entry.waiting.size() >= static_cast<std::size_t>(max_client_waiting_)) {
    return Outcome::kClientFull;
  }
  entry.waiting.push_back(std::move(task));
  ++waiting_;
  ++unfinished_;
  Schedule(client);
  return Outcome::kTaken;
}

void FairPool::StopTaking() {
  std::unique_lock<std::mutex> lock(mutex_);
  taking_ = false;
  drained_.wait(lock, [this] { return unfinished_ == 0; });
}

void FairPool::Schedule(const std::string& name) {
  const auto found = clients_.find(name);
  Client& client = found->second;
  if (client.in_turns) return;
  if (!client.waiting.empty() && client.running < max_client_running_) {
    client.in_turns = true;
    turns_.push_back(name);
    wake_.notify_one();
  } else if (client.waiting.empty() && client.running == 0) {
    clients_.erase(found);
  }
}

void FairPool::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !turns_.empty(); });
    if (turns_.empty()) return;  // Stopping, and nothing was taken.
    const std::string name = std::move(turns_.front());
    turns_.pop_front();
    Client& client = clients_.at(name);
    client.in_turns = false;
    std::function<void()> task = std::move(client.waiting.front());
    client.waiting.pop_front();
    --waiting_;
    ++client.running;
    Schedule(name);  // Its next task, if any, after the other clients'.
    lock.unlock();
    try {
      task();
    } catch (...) {
      // The task's own error handling has run; nothing is left to report to.
    }
    task = nullptr;  // What it held goes before StopTaking returns.
    lock.lock();
    --clients_.at(name).running;
    Schedule(name);
    if (--unfinished_ == 0) drained_.notify_all();
  }
}

}  // namespace fanyi
