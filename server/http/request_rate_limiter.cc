#include "server/http/request_rate_limiter.h"

#include <algorithm>
#include <utility>

namespace fanyi {

RequestRateLimiter::RequestRateLimiter(std::chrono::seconds period, Clock clock)
    : period_(std::max(period, std::chrono::seconds(1))),
      clock_(clock ? std::move(clock)
                   : [] { return std::chrono::steady_clock::now(); }),
      last_sweep_(clock_()) {}

double RequestRateLimiter::Drained(
    const Bucket& bucket, int64_t limit,
    std::chrono::steady_clock::time_point now) const {
  const double periods =
      std::chrono::duration<double>(now - bucket.updated).count() /
      std::chrono::duration<double>(period_).count();
  return std::max(0.0, bucket.spent - periods * static_cast<double>(limit));
}

bool RequestRateLimiter::Admit(const std::string& client, int64_t limit,
                               int64_t cost) {
  if (limit <= 0) return true;
  const auto now = clock_();
  std::lock_guard<std::mutex> lock(mutex_);
  // Sweeps at most once a minute (or period): each is linear in the table.
  if (now - last_sweep_ > std::min<std::chrono::steady_clock::duration>(
                              period_, std::chrono::minutes(1))) {
    ForgetIdleClients(now);
  }
  auto found = buckets_.find(client);
  if (found == buckets_.end()) {
    // Full: swept again at most once a second (a sweep is linear in the
    // table), and till then new clients pass uncounted.
    if (buckets_.size() >= kMaxClients &&
        now - last_sweep_ >= std::chrono::seconds(1)) {
      ForgetIdleClients(now);
    }
    if (buckets_.size() >= kMaxClients) return true;
    found = buckets_.emplace(client, Bucket{0, limit, now}).first;
  }
  Bucket& bucket = found->second;
  // Drained at the rate that held since the last call.
  bucket.spent = Drained(bucket, bucket.limit, now);
  bucket.limit = limit;
  bucket.updated = now;
  if (bucket.spent + static_cast<double>(cost) > static_cast<double>(limit)) {
    return false;
  }
  bucket.spent += static_cast<double>(cost);
  return true;
}

bool RequestRateLimiter::WouldRefuse(const std::string& client, int64_t limit,
                                     int64_t cost) {
  if (limit <= 0) return false;
  const auto now = clock_();
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = buckets_.find(client);
  const double spent = found == buckets_.end()
                           ? 0
                           : Drained(found->second, found->second.limit, now);
  return spent + static_cast<double>(cost) > static_cast<double>(limit);
}

void RequestRateLimiter::ForgetIdleClients(
    std::chrono::steady_clock::time_point now) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    // An empty bucket is what a new client gets: forgetting it changes
    // nothing.
    if (Drained(it->second, it->second.limit, now) <= 0) {
      it = buckets_.erase(it);
    } else {
      ++it;
    }
  }
  last_sweep_ = now;
}

}  // namespace fanyi
