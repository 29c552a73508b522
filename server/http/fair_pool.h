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
// its own queue and runs one task at a time; the threads take the clients
// in turns. So while fewer clients than threads are busy, another client's
// task starts at once, and the operating system shares the cores between
// them; beyond that, it waits for one task, not for a queue.
//
// Waiting tasks are bounded per client and in all; when all is full, a
// client with a shorter queue than the longest pushes out that queue's
// newest task (its `refuse` runs instead), so that a few clients cannot
// fill the room and lock every other out.
//
// A task may be posted as large (a large body, a document): those run at
// most `max_large_running` at a time, in the clients' turns, so that what
// large reads take in all (memory, cores) stays that of a few, however many
// clients send them. A client whose next task is large waits for one to
// end without holding a thread; other clients' small tasks go on past it
// (its own wait behind it: one client's tasks run in order). Large tasks
// may fill half the waiting room at most, so that small ones always have
// room. Once StopTaking is called, large tasks run as threads allow.
// Thread-safe.
class FairPool {
 public:
  // What TryPost did with a task.
  enum class Outcome {
    kTaken,       // Queued; it will run, or be refused if pushed out.
    kFull,        // max_waiting tasks wait, none in a longer queue.
    kLargeFull,   // A large task, and max_waiting / 2 large ones wait.
    kClientFull,  // The client has max_client_waiting tasks waiting.
    kStopped,     // StopTaking has been called.
  };

  // Starts `threads` threads. Throws std::invalid_argument unless every
  // argument is positive.
  FairPool(int threads, int max_waiting, int max_client_waiting,
           int max_large_running);
  // StopTaking, then joins the threads.
  ~FairPool();

  FairPool(const FairPool&) = delete;
  FairPool& operator=(const FairPool&) = delete;

  // Queues `run` in `client`'s turn, unless an Outcome other than kTaken
  // says why not (then neither callback is called). A task pushed out of
  // its queue later calls `refuse` (on the thread posting the task that
  // took its place) instead of `run`. Exceptions from either are caught and
  // dropped: a task reports its own failures. A `large` task runs only while
  // fewer than max_large_running others do.
  Outcome TryPost(const std::string& client, std::function<void()> run,
                  std::function<void()> refuse, bool large = false);
  // From now on TryPost refuses every task; returns once every task it
  // took has run. Not from one of the pool's tasks (it would wait for
  // itself).
  void StopTaking();

 private:
  struct Task {
    std::function<void()> run;
    std::function<void()> refuse;
    bool large = false;
  };
  struct Client {
    std::deque<Task> waiting;
    bool running = false;
    bool in_turns = false;  // Listed in turns_.
  };

  // Thread body: runs the clients' tasks in turns until stopping.
  void Run();
  // The first client in turns_ whose next task may start now (a large one
  // only below max_large_running_, or once stopping), or turns_.end().
  // Needs mutex_ held.
  std::deque<std::string>::iterator NextRunnable();
  // Removes the newest task of the client with the longest queue, if that
  // queue is longer than `own` + 1, and returns its refusal; else returns
  // null. Needs mutex_ held.
  std::function<void()> PushOutLongest(std::size_t own);
  // Lists `name` at the end of turns_ when it has a task waiting, runs none
  // and is not listed; drops its entry when it has nothing left. Needs
  // mutex_ held.
  void Schedule(const std::string& name);

  const int max_waiting_;
  const int max_client_waiting_;
  const int max_large_running_;
  std::mutex mutex_;
  // Signalled when turns_ grows, when a large task ends, and on stop.
  std::condition_variable wake_;
  std::condition_variable drained_;  // Signalled when unfinished_ hits 0.
  // Guarded by mutex_: the clients with tasks waiting or running, and the
  // order in which those that run none take their turns.
  std::unordered_map<std::string, Client> clients_;
  std::deque<std::string> turns_;
  int waiting_ = 0;        // Guarded by mutex_: tasks queued, all clients.
  int unfinished_ = 0;     // Guarded by mutex_: tasks queued or running.
  int large_running_ = 0;  // Guarded by mutex_.
  int large_waiting_ = 0;  // Guarded by mutex_.
  bool taking_ = true;     // Guarded by mutex_.
  bool stopping_ = false;  // Guarded by mutex_: the threads are to end.
  std::vector<std::thread> threads_;  // Fixed once built.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_FAIR_POOL_H_
