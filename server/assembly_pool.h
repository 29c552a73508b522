#ifndef FANYI_SERVER_ASSEMBLY_POOL_H_
#define FANYI_SERVER_ASSEMBLY_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fanyi {

// A few threads that finish RPCs off the decode threads: when the last part
// of a call has decoded, its assembly (detokenizing, script conversion,
// spans restored, the response filled and sent) is posted here, so that a
// decode worker only steps rows and never makes the rows it holds wait for
// a document's assembly. Tasks run in the order posted. The queue needs no
// bound of its own: it holds at most one task per RPC in flight, and the
// batcher's queue bounds those. Thread-safe.
//
// With a bound on the tasks waiting, the same pool takes work off other
// threads that must never wait on it: the HTTP API reads request bodies
// and documents on one (LibreTranslateApi), so that its connection threads
// stay free for /health and other clients, and refuses requests beyond
// the bound.
class AssemblyPool {
 public:
  // Starts `threads` threads; `max_waiting` > 0 bounds the tasks TryPost
  // leaves waiting (0: no bound). Throws std::invalid_argument when
  // `threads` is not positive or `max_waiting` negative.
  explicit AssemblyPool(int threads, int max_waiting = 0);
  // Runs what is queued, then joins the threads.
  ~AssemblyPool();

  AssemblyPool(const AssemblyPool&) = delete;
  AssemblyPool& operator=(const AssemblyPool&) = delete;

  // Queues `task` for a pool thread; once the pool is being destroyed, runs
  // it on the caller's thread instead, so that no RPC is left unfinished.
  // An exception from `task` is caught and dropped: a task reports its own
  // failures.
  void Post(std::function<void()> task);
  // As Post, unless max_waiting tasks wait already or StopTaking has
  // been called: then drops `task` and returns false.
  bool TryPost(std::function<void()> task);
  // From now on TryPost refuses every task; then waits, as Drain, for those
  // it took. For a pool whose tasks call into what is torn down after it.
  void StopTaking();

  // Returns once every task posted so far, and every task those post, has
  // run.
  void Drain();

 private:
  // Post, or TryPost when `bounded`.
  bool Enqueue(std::function<void()> task, bool bounded);
  // Thread body: runs tasks until stopping and drained.
  void Run();

  std::mutex mutex_;
  std::condition_variable wake_;     // Signalled on Post and on stopping.
  std::condition_variable drained_;  // Signalled when unfinished_ hits 0.
  std::deque<std::function<void()>> tasks_;  // Guarded by mutex_.
  int unfinished_ = 0;     // Guarded by mutex_: tasks queued or running.
  bool stopping_ = false;  // Guarded by mutex_.
  const int max_waiting_;  // For TryPost; 0: no bound.
  bool taking_ = true;     // Guarded by mutex_: TryPost takes tasks.
  std::vector<std::thread> threads_;  // Fixed once built.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_ASSEMBLY_POOL_H_
