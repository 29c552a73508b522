#include "server/assembly_pool.h"

#include <stdexcept>
#include <utility>

namespace fanyi {

void RunQuietly(const std::function<void()>& task) {
  try {
    task();
  } catch (...) {
    // The task's own error handling has run; nothing is left to report to.
  }
}

AssemblyPool::AssemblyPool(int threads) {
  if (threads < 1) {
    throw std::invalid_argument("assembly_threads must be at least 1, not " +
                                std::to_string(threads));
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_) {
      tasks_.push_back(std::move(task));
      ++unfinished_;
      wake_.notify_one();
      return;
    }
  }
  RunQuietly(task);
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
