// Leaky buckets kept in Redis, so that every replica of the server spends
// from the same ones: what RequestRateLimiter does in one process, done by
// one Lua script per call (EVALSHA, by its SHA-1) on Redis's own clock,
// through hiredis.
#ifndef FANYI_SERVER_HTTP_REDIS_COUNTERS_H_
#define FANYI_SERVER_HTTP_REDIS_COUNTERS_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

struct redisContext;

namespace fanyi {

// Where a Redis server is: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB].
struct RedisAddress {
  std::string host;
  int port = 6379;
  std::string user;      // Empty: the default user.
  std::string password;  // Empty: no AUTH.
  int database = 0;

  // Throws std::invalid_argument saying what is wrong with `url`.
  static RedisAddress Parse(const std::string& url);
};

// One connection to Redis, made when first needed and again after a
// failure, at most once a second, so that a Redis that is down costs a
// request no more than the wait for it once a second (timeout_ms, for the
// connection and for each reply). Thread-safe: calls take turns.
class RedisCounters {
 public:
  // Throws std::invalid_argument for a bad `url`; connects later.
  explicit RedisCounters(const std::string& url, int timeout_ms = 250);
  ~RedisCounters();

  RedisCounters(const RedisCounters&) = delete;
  RedisCounters& operator=(const RedisCounters&) = delete;

  // Spends `cost` from bucket `key` under `limit` a `period`, as
  // RequestRateLimiter::Admit does (or, with `peek`, says whether it
  // would, spending nothing): true when admitted. nullopt when Redis could
  // not answer; `error` then says why.
  std::optional<bool> Spend(const std::string& key, int64_t limit, int64_t cost,
                            std::chrono::milliseconds period, bool peek,
                            std::string* error);

 private:
  // Connects (and authenticates and selects the database) unless
  // connected; false, with `error`, when it cannot. Needs mutex_.
  bool Connect(std::string* error);
  // Drops the connection after a failure. Needs mutex_.
  void Disconnect();

  const RedisAddress address_;
  const int timeout_ms_;
  std::mutex mutex_;
  redisContext* context_ = nullptr;  // Guarded by mutex_.
  // Guarded by mutex_: no connection is tried before this.
  std::chrono::steady_clock::time_point next_try_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_REDIS_COUNTERS_H_
