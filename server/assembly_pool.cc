#include "server/assembly_pool.h"

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

AssemblyPool::AssemblyPool(int threads, int max_waiting)
    : max_waiting_(max_waiting) {
  if (threads < 1) {
    throw std::invalid_argument("a pool needs at least 1 thread, not " +
                                std::to_string(threads));
  }
  if (max_waiting < 0) {
    throw std::invalid_argument("a pool's bound must not be negative, not " +
                                std::to_string(max_waiting));
  }
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

AssemblyPool::~AssemblyPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void AssemblyPool::Post(std::function<void()> task) {
  Enqueue(std::move(task), /*bounded=*/false);
}

bool AssemblyPool::TryPost(std::function<void()> task) {
  return Enqueue(std::move(task), /*bounded=*/true);
}

bool AssemblyPool::Enqueue(std::function<void()> task, bool bounded) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_) {
      if (bounded && (!taking_ || (max_waiting_ > 0 &&
                                   tasks_.size() >= static_cast<std::size_t>(
                                                        max_waiting_)))) {
        return false;
      }
      tasks_.push_back(std::move(task));
      ++unfinished_;
      wake_.notify_one();
      return true;
    }
  }
  RunQuietly(task);
  return true;
}

void AssemblyPool::StopTaking() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    taking_ = false;
  }
  Drain();
}

void AssemblyPool::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [this] { return unfinished_ == 0; });
}

void AssemblyPool::Run() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // Stopping, and drained.
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    RunQuietly(task);
    task = nullptr;  // What it held (a call, its model) goes before Drain
                     // returns.
    std::lock_guard<std::mutex> lock(mutex_);
    if (--unfinished_ == 0) drained_.notify_all();
  }
}

}  // namespace fanyi
