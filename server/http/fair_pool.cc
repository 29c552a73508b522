#include "server/http/fair_pool.h"

#include <stdexcept>
#include <utility>

namespace fanyi {
namespace {

void RunQuietly(const std::function<void()>& task) {
  try {
    task();
  } catch (...) {
    // The task's own error handling has run; nothing is left to report to.
  }
}

}  // namespace

FairPool::FairPool(int threads, int max_waiting, int max_client_waiting)
    : max_waiting_(max_waiting), max_client_waiting_(max_client_waiting) {
  if (threads < 1 || max_waiting < 1 || max_client_waiting < 1) {
    throw std::invalid_argument(
        "a fair pool needs at least 1 thread and room for 1 waiting task "
        "in all and per client, not " +
        std::to_string(threads) + ", " + std::to_string(max_waiting) + " and " +
        std::to_string(max_client_waiting));
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
                                    std::function<void()> run,
                                    std::function<void()> refuse) {
  std::function<void()> pushed_out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!taking_) return Outcome::kStopped;
    const auto found = clients_.find(client);
    const std::size_t own =
        found == clients_.end() ? 0 : found->second.waiting.size();
    if (own >= static_cast<std::size_t>(max_client_waiting_)) {
      return Outcome::kClientFull;
    }
    if (waiting_ >= max_waiting_) {
      pushed_out = PushOutLongest(own);
      if (!pushed_out) return Outcome::kFull;
    }
    Client& entry = clients_[client];
    entry.waiting.push_back({std::move(run), std::move(refuse)});
    ++waiting_;
    ++unfinished_;
    Schedule(client);
  }
  if (pushed_out) RunQuietly(pushed_out);
  return Outcome::kTaken;
}

std::function<void()> FairPool::PushOutLongest(std::size_t own) {
  Client* longest = nullptr;
  for (auto& [name, client] : clients_) {
    if (longest == nullptr || client.waiting.size() > longest->waiting.size()) {
      longest = &client;
    }
  }
  if (longest == nullptr || longest->waiting.size() <= own + 1) return nullptr;
  std::function<void()> refuse = std::move(longest->waiting.back().refuse);
  longest->waiting.pop_back();  // Still not empty: it was longer than 1.
  --waiting_;
  --unfinished_;  // Not 0: the pushing task is about to count.
  return refuse ? refuse : [] {};
}

void FairPool::StopTaking() {
  std::unique_lock<std::mutex> lock(mutex_);
  taking_ = false;
  drained_.wait(lock, [this] { return unfinished_ == 0; });
}

void FairPool::Schedule(const std::string& name) {
  const auto found = clients_.find(name);
  Client& client = found->second;
  if (client.in_turns || client.running) return;
  if (!client.waiting.empty()) {
    client.in_turns = true;
    turns_.push_back(name);
    wake_.notify_one();
  } else {
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
    client.running = true;
    std::function<void()> run = std::move(client.waiting.front().run);
    client.waiting.pop_front();
    --waiting_;
    lock.unlock();
    RunQuietly(run);
    run = nullptr;  // What it held goes before StopTaking returns.
    lock.lock();
    clients_.at(name).running = false;
    Schedule(name);  // Its next task, if any, after the other clients'.
    if (--unfinished_ == 0) drained_.notify_all();
  }
}

}  // namespace fanyi
