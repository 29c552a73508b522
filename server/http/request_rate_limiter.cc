#include "server/http/request_rate_limiter.h"

#include <algorithm>
#include <utility>

namespace fanyi {

RequestRateLimiter::RequestRateLimiter(int per_minute, Clock clock)
    : per_minute_(std::max(per_minute, 0)),
      clock_(clock ? std::move(clock)
                   : [] { return std::chrono::steady_clock::now(); }),
      last_sweep_(clock_()) {}

bool RequestRateLimiter::Admit(const std::string& client) {
  if (per_minute_ == 0) return true;
  const auto now = clock_();
  std::lock_guard<std::mutex> lock(mutex_);
  if (now - last_sweep_ > std::chrono::minutes(1)) ForgetIdleClients(now);
  auto [it, added] = buckets_.try_emplace(client);
  Bucket& bucket = it->second;
  if (added) {
    bucket.tokens = per_minute_;
  } else {
    const double minutes =
        std::chrono::duration<double, std::ratio<60>>(now - bucket.updated)
            .count();
    bucket.tokens =
        std::min<double>(per_minute_, bucket.tokens + minutes * per_minute_);
  }
  bucket.updated = now;
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

void RequestRateLimiter::ForgetIdleClients(
    std::chrono::steady_clock::time_point now) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    // A minute idle refills any bucket: forgetting it changes nothing.
    if (now - it->second.updated >= std::chrono::minutes(1)) {
      it = buckets_.erase(it);
    } else {
      ++it;
    }
  }
  last_sweep_ = now;
}

}  // namespace fanyi
