#include "server/http/fair_pool.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "server/assembly_pool.h"

namespace fanyi {

FairPool::FairPool(int threads, int max_waiting, int max_client_waiting,
                   int max_large_running)
    : max_waiting_(max_waiting),
      max_client_waiting_(max_client_waiting),
      max_large_running_(max_large_running) {
  if (threads < 1 || max_waiting < 1 || max_client_waiting < 1 ||
      max_large_running < 1) {
    throw std::invalid_argument(
        "a fair pool needs at least 1 thread, room for 1 waiting task in all "
        "and per client, and 1 large task running, not " +
        std::to_string(threads) + ", " + std::to_string(max_waiting) + ", " +
        std::to_string(max_client_waiting) + " and " +
        std::to_string(max_large_running));
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
                                    std::function<void()> refuse, bool large) {
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
    if (large && large_waiting_ >= std::max(1, max_waiting_ / 2)) {
      return Outcome::kLargeFull;
    }
    if (waiting_ >= max_waiting_) {
      pushed_out = PushOutLongest(own);
      if (!pushed_out) return Outcome::kFull;
    }
    Client& entry = clients_[client];
    entry.waiting.push_back({std::move(run), std::move(refuse), large});
    ++waiting_;
    if (large) ++large_waiting_;
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
  if (longest->waiting.back().large) --large_waiting_;
  longest->waiting.pop_back();  // Still not empty: it was longer than 1.
  --waiting_;
  --unfinished_;  // Not 0: the pushing task is about to count.
  return refuse ? refuse : [] {};
}

void FairPool::StopTaking() {
  std::unique_lock<std::mutex> lock(mutex_);
  taking_ = false;
  wake_.notify_all();  // Large tasks waiting for their turn may run now.
  drained_.wait(lock, [this] { return unfinished_ == 0; });
}

void FairPool::Schedule(const std::string& name) {
  const auto found = clients_.find(name);
  Client& client = found->second;
  if (client.in_turns || client.running) return;
  if (!client.waiting.empty()) {
    turns_.push_back(name);
    client.in_turns = true;
    wake_.notify_one();
  } else {
    clients_.erase(found);
  }
}

std::deque<std::string>::iterator FairPool::NextRunnable() {
  if (!taking_ || large_running_ < max_large_running_) return turns_.begin();
  return std::find_if(turns_.begin(), turns_.end(), [this](const auto& name) {
    return !clients_.at(name).waiting.front().large;
  });
}

void FairPool::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock,
               [this] { return stopping_ || NextRunnable() != turns_.end(); });
    const auto next = NextRunnable();
    if (next == turns_.end()) return;  // Stopping, and nothing was taken.
    const std::string name = std::move(*next);
    turns_.erase(next);
    Client& client = clients_.at(name);
    client.in_turns = false;
    client.running = true;
    std::function<void()> run = std::move(client.waiting.front().run);
    const bool large = client.waiting.front().large;
    client.waiting.pop_front();
    --waiting_;
    if (large) {
      --large_waiting_;
      ++large_running_;
    }
    lock.unlock();
    RunQuietly(run);
    run = nullptr;  // What it held goes before StopTaking returns.
    lock.lock();
    clients_.at(name).running = false;
    Schedule(name);  // Its next task, if any, after the other clients'.
    if (large) {
      --large_running_;
      wake_.notify_all();  // A client that waited for it may run now.
    }
    if (--unfinished_ == 0) drained_.notify_all();
  }
}

}  // namespace fanyi
