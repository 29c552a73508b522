#ifndef FANYI_SERVER_HTTP_FAIR_POOL_H_
#define FANYI_SERVER_HTTP_FAIR_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace fanyi {

// Threads that run tasks in turns across clients, for the HTTP API's reading
// of bodies and documents (LibreTranslateApi). A hostile body may take up to
// its parse budget (a second of CPU and more) before it is refused; in one
// queue, a client that sends such bodies over several connections would
// hold every honest request behind them. Here each client (its address) has
// its own queue; the threads take the clients in turn, one task each, and
// one client runs at most half the threads (rounded up) at once, so another
// client always finds a thread within one task's time. Waiting tasks are
// bounded in all and per client. Thread-safe.
class FairPool {
 public:
  // What TryPost did with a task.
  enum class Outcome {
    kTaken,       // Queued; it will run.
    kFull,        // max_waiting tasks wait already.
    kClientFull,  // The client has max_client_waiting tasks waiting.
    kStopped,     // StopTaking has been called.
  };

  // Starts `threads` threads. Throws std::invalid_argument unless every
  // argument is positive.
  FairPool(int threads, int max_waiting, int max_client_waiting);
  // StopTaking, then joins the threads.
  ~FairPool();

  FairPool(const FairPool&) = delete;
  FairPool& operator=(const FairPool&) = delete;

  // Queues `task` in `client`'s turn, unless an Outcome other than kTaken
  // says why not (then `task` is dropped). An exception from `task` is
  // caught and dropped: a task reports its own failures.
  Outcome TryPost(const std::string& client, std::function<void()> task);
  // From now on TryPost refuses every task; returns once every task it
  // took has run.
  void StopTaking();

  // Tasks one client may run at once.
  int max_client_running() const { return max_client_running_; }

 private:
  struct Client {
    std::deque<std::function<void()>> waiting;
    int running = 0;
    bool in_turns = false;  // Listed in turns_.
  };

  // Thread body: runs the clients' tasks in turns until stopping.
  void Run();
  // Lists `name` at the end of turns_ when it has a task waiting, may run
  // one more and is not listed; drops its entry when it has nothing left.
  // Needs mutex_ held.
  void Schedule(const std::string& name);

  const int max_waiting_;
  const int max_client_waiting_;
  const int max_client_running_;
  std::mutex mutex_;
  std::condition_variable wake_;     // Signalled when turns_ grows, and on stop.
  std::condition_variable drained_;  // Signalled when unfinished_ hits 0.
  // Guarded by mutex_: the clients with tasks waiting or running, and the
  // order in which those that may run one more take their turns.
  std::unordered_map<std::string, Client> clients_;
  std::deque<std::string> turns_;
  int waiting_ = 0;        // Guarded by mutex_: tasks queued, all clients.
  int unfinished_ = 0;     // Guarded by mutex_: tasks queued or running.
  bool taking_ = true;     // Guarded by mutex_.
  bool stopping_ = false;  // Guarded by mutex_: the threads are to end.
  std::vector<std::thread> threads_;  // Fixed once built.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_FAIR_POOL_H_
