// Who a LibreTranslate API request comes from and whether it is served
// now: API keys as LibreTranslate has them (from a flat file, or with their
// own limits from an ApiKeyStore) and the limits of requests a minute and
// characters a day for each key, or each address for key-less requests.
#ifndef FANYI_SERVER_HTTP_API_ACCESS_H_
#define FANYI_SERVER_HTTP_API_ACCESS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "server/http/api_key_store.h"
#include "server/http/http_metrics.h"
#include "server/http/redis_counters.h"
#include "server/http/request_fields.h"
#include "server/http/request_rate_limiter.h"

namespace fanyi {

// The keys of an --api_keys_file at `path`, one per line; blank lines and
// lines starting with # are skipped. Throws std::runtime_error naming the file
// when it cannot be read or holds no key.
std::set<std::string> ReadApiKeysFile(const std::string& path);

// Settings of ApiAccess.
struct ApiAccessOptions {
  // Keys from a flat file (fanyi's --api_keys_file): every request must
  // carry one of them, and each has the default limits. Empty: none.
  std::set<std::string> required_keys;
  // The SQLite file of keys with their own limits (--api_keys_db), in
  // LibreTranslate's layout; empty: none. Changes to it hold from the next
  // request on.
  std::string api_keys_db;
  // With api_keys_db: refuse requests without a key (400), rather than
  // serve them at the defaults, as LibreTranslate does.
  bool require_api_key = false;
  // Requests a minute per key or address, unless its key says otherwise;
  // 0: no limit.
  int64_t requests_per_minute = 0;
  // Requests an hour and a day per key or address, for clients at the
  // default requests a minute (a key with its own keeps to that alone);
  // 0: no limit.
  int64_t requests_per_hour = 0;
  int64_t requests_per_day = 0;
  // Characters a day (the texts of /translate and /detect, a file's
  // bytes) per key or address, unless its key says otherwise; 0: no limit.
  int64_t chars_per_day = 0;
  // An address refused by the limits (429) this many times is banned
  // (403) until they are forgiven, one each ban_forgiveness, as
  // LibreTranslate's --req-flood-threshold does; 0: never banned.
  int64_t ban_after = 0;
  std::chrono::seconds ban_forgiveness = std::chrono::minutes(10);
  // redis://HOST[:PORT][/DB]: the counters of every limit kept there, so
  // that every replica enforces one limit; while it cannot be reached,
  // each replica counts on its own. Empty: counted in this process.
  std::string redis_url;
};

// What a request spends of its client's characters.
struct RequestCost {
  // Toward the characters a day: every text's characters, or a file's
  // bytes.
  int64_t characters = 0;
  // Against a key's characters a request (LibreTranslate's char_limit,
  // which holds for each text): the longest text's; 0 for a file.
  int64_t longest_text = 0;
};

// The client a request was admitted as.
struct ApiCaller {
  // Whom the request counts against: "key K" for a known key, else
  // "address A".
  std::string client;
  // The known key it carried; empty when none.
  std::string api_key;
};

// Decides, per request, as LibreTranslate does: a banned address is
// refused (403); a key no store holds is refused (403 "Invalid API key");
// a request without a key is served at the defaults unless a key is
// required; each key or address then spends one request of its minute
// (and hour and day) and its characters of its day (429 past any, which
// counts toward a ban), and a request longer than its key's characters a
// request is refused (400). Thread-safe.
class ApiAccess {
 public:
  // Throws std::runtime_error naming api_keys_db when it cannot be opened,
  // std::invalid_argument for a bad redis_url. `metrics` (which must
  // outlive this) shows whether Redis answers.
  ApiAccess(ApiAccessOptions options, HttpMetrics& metrics);

  // Admits a request with `fields` from `peer` (its address) costing
  // `cost`, or throws HttpError with LibreTranslate's status and message.
  ApiCaller Admit(const RequestFields& fields, const std::string& peer,
                  const RequestCost& cost) const;

  // Whether keys are in use, and whether every request needs one (for
  // LibreTranslate's page: /frontend/settings).
  bool keys_in_use() const;
  bool key_required() const;

 private:
  // The limits of the api_key field `sent` (null or empty: none sent);
  // throws HttpError for a key no store holds (or one that is not a
  // string), a missing one where keys are required, or a store that
  // cannot be read (503, the reason logged).
  ApiKeyLimits LimitsOf(const nlohmann::json& sent) const;
  // Spends `cost` of `client`'s `limit` on `local`'s counters, or on
  // Redis's under `name` when it answers; with `peek`, only says whether
  // that would be admitted.
  bool Spend(RequestRateLimiter& local, const char* name,
             const std::string& client, int64_t limit, int64_t cost,
             bool peek = false) const;
  // Throws HttpError 429 with `message`, counting it against `address`.
  [[noreturn]] void Refuse(const std::string& address,
                           const std::string& message) const;

  const ApiAccessOptions options_;
  // Null without options_.api_keys_db.
  const std::unique_ptr<ApiKeyStore> store_;
  // Mutable: counting a request is not a change of the access rules.
  mutable RequestRateLimiter requests_;
  mutable RequestRateLimiter hourly_requests_;
  mutable RequestRateLimiter daily_requests_;
  mutable RequestRateLimiter characters_;
  mutable RequestRateLimiter violations_;  // Per address.
  // Null without options_.redis_url.
  const std::unique_ptr<RedisCounters> redis_;
  HttpMetrics& metrics_;
  // Whether Redis answered the last time: changes are logged once.
  mutable std::atomic<bool> redis_up_{true};
};

// Whom a key-less request from `peer` counts against: "address A", or for
// IPv6 its network of /64 ("address 2001:db8::/64").
std::string ClientOfAddress(const std::string& peer);

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_API_ACCESS_H_
