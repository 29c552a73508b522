#ifndef FANYI_SERVER_HTTP_REQUEST_RATE_LIMITER_H_
#define FANYI_SERVER_HTTP_REQUEST_RATE_LIMITER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace fanyi {

// A limit of N a period (requests a minute, characters a day) per client
// (an API key or an address), as a leaky bucket per client: what a client
// has spent drains at N a period, and it may spend while that stays within
// N (so N at once, then N over each period, evenly). Each call names the
// client's limit, so that a key's limit may change while it is counted:
// raised, the difference is there at once; lowered below what was spent,
// the client waits for the rest to drain. Clients with nothing left to
// drain are forgotten, so the table holds only those that spent within the
// last period. Thread-safe.
class RequestRateLimiter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // The most clients counted at once: past it (a flood from that many
  // addresses, or IPv6 networks, within one period), new clients pass
  // uncounted rather than let the table grow without bound or each new
  // client pay for a sweep of it.
  static constexpr std::size_t kMaxClients = std::size_t{1} << 20;

  // `clock` (tests) defaults to steady_clock.
  explicit RequestRateLimiter(std::chrono::seconds period,
                              Clock clock = nullptr);

  // True when `client` may spend `cost` now under a limit of `limit` a
  // period (and counts it); false when that would go past it, which
  // counts nothing. `limit` 0: no limit.
  bool Admit(const std::string& client, int64_t limit, int64_t cost = 1);

  std::chrono::seconds period() const { return period_; }

  // Whether Admit(client, limit, cost) would refuse now; counts nothing.
  bool WouldRefuse(const std::string& client, int64_t limit, int64_t cost = 1);

 private:
  struct Bucket {
    double spent = 0;
    int64_t limit = 0;
    std::chrono::steady_clock::time_point updated;
  };

  // What `bucket` holds at `now`, drained at `limit` a period.
  double Drained(const Bucket& bucket, int64_t limit,
                 std::chrono::steady_clock::time_point now) const;

  // Drops the clients whose bucket has drained. Needs mutex_.
  void ForgetIdleClients(std::chrono::steady_clock::time_point now);

  const std::chrono::seconds period_;
  const Clock clock_;
  std::mutex mutex_;
  std::unordered_map<std::string, Bucket> buckets_;  // Guarded by mutex_.
  // Guarded by mutex_: when idle clients were last forgotten.
  std::chrono::steady_clock::time_point last_sweep_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_REQUEST_RATE_LIMITER_H_
