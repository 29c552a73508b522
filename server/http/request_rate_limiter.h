#ifndef FANYI_SERVER_HTTP_REQUEST_RATE_LIMITER_H_
#define FANYI_SERVER_HTTP_REQUEST_RATE_LIMITER_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace fanyi {

// LibreTranslate's request limit ("N per minute", per API key or client
// address), as a token bucket per client: a client may send N requests at
// once, then one each 60/N seconds. Clients idle long enough to have a
// full bucket are forgotten, so the table stays as large as the clients
// of the last minute. Thread-safe.
class RequestRateLimiter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `per_minute` 0: no limit. `clock` (tests) defaults to steady_clock.
  explicit RequestRateLimiter(int per_minute, Clock clock = nullptr);

  // True when `client` may send a request now (and counts it); false when
  // it has used its requests of the last minute.
  bool Admit(const std::string& client);

  int per_minute() const { return per_minute_; }

 private:
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point updated;
  };

  // Drops the clients whose bucket has refilled. Needs mutex_.
  void ForgetIdleClients(std::chrono::steady_clock::time_point now);

  const int per_minute_;
  const Clock clock_;
  std::mutex mutex_;
  std::unordered_map<std::string, Bucket> buckets_;  // Guarded by mutex_.
  // Guarded by mutex_: when idle clients were last forgotten.
  std::chrono::steady_clock::time_point last_sweep_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_REQUEST_RATE_LIMITER_H_
