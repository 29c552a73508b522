#ifndef FANYI_SERVER_ASSEMBLY_POOL_H_
#define FANYI_SERVER_ASSEMBLY_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fanyi {

// Runs a pool's `task`, and drops what it throws: a task reports its own
// errors (to its caller's callback), and a pool thread must go on.
void RunQuietly(const std::function<void()>& task);

// A few threads that finish RPCs off the decode threads: when the last part
// of a call has decoded, its assembly (detokenizing, script conversion,
// spans restored, the response filled and sent) is posted here, so that a
// decode worker only steps rows and never makes the rows it holds wait for
// a document's assembly. Tasks run in the order posted. The queue needs no
// bound of its own: it holds at most one task per RPC in flight, and the
// batcher's queue bounds those. Thread-safe.
class AssemblyPool {
 public:
  // Starts `threads` threads; throws std::invalid_argument when it is not
  // positive.
  explicit AssemblyPool(int threads);
  // Runs what is queued, then joins the threads.
  ~AssemblyPool();

  AssemblyPool(const AssemblyPool&) = delete;
  AssemblyPool& operator=(const AssemblyPool&) = delete;

  // Queues `task` for a pool thread; once the pool is being destroyed, runs
  // it on the caller's thread instead, so that no RPC is left unfinished.
  // An exception from `task` is caught and dropped: a task reports its own
  // failures.
  void Post(std::function<void()> task);

  // Returns once every task posted so far, and every task those post, has
  // run.
  void Drain();

 private:
  // Thread body: runs tasks until stopping and drained.
  void Run();

  std::mutex mutex_;
  std::condition_variable wake_;     // Signalled on Post and on stopping.
  std::condition_variable drained_;  // Signalled when unfinished_ hits 0.
  std::deque<std::function<void()>> tasks_;  // Guarded by mutex_.
  int unfinished_ = 0;     // Guarded by mutex_: tasks queued or running.
  bool stopping_ = false;  // Guarded by mutex_.
  std::vector<std::thread> threads_;  // Fixed once built.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_ASSEMBLY_POOL_H_
