#include "server/http/redis_counters.h"

#include <hiredis/hiredis.h>
#include <openssl/sha.h>

#include <memory>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace fanyi {
namespace {

// RequestRateLimiter's bucket in a hash {s: spent, t: updated (ms), l: the
// limit it drained at}, on Redis's clock (the same for every replica). It
// expires once it would have drained, so Redis keeps only buckets in use.
// ARGV: limit, cost, period (ms), peek ("1": say, spend nothing). Returns
// 1 when admitted, else 0.
constexpr const char* kSpendScript = R"lua(
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local limit = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local bucket = redis.call('HMGET', KEYS[1], 's', 't', 'l')
local spent = 0
if bucket[1] then
  local drained = (now - tonumber(bucket[2])) / period * tonumber(bucket[3])
  spent = math.max(0, tonumber(bucket[1]) - drained)
end
local admitted = spent + cost <= limit
if ARGV[4] == '1' then return admitted and 1 or 0 end
if admitted then spent = spent + cost end
redis.call('HSET', KEYS[1], 's', tostring(spent), 't', now, 'l', limit)
redis.call('PEXPIRE', KEYS[1], math.ceil(spent / limit * period) + 1000)
return admitted and 1 or 0
)lua";

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

// Sends the 8-part command `parts` (binary-safe: an argv, never
// formatted) and waits for its reply; null when none came.
Reply Command(redisContext* context, const std::string (&parts)[8]) {
  const char* argv[8];
  std::size_t lengths[8];
  for (int i = 0; i < 8; ++i) {
    argv[i] = parts[i].data();
    lengths[i] = parts[i].size();
  }
  return Reply(
      static_cast<redisReply*>(redisCommandArgv(context, 8, argv, lengths)));
}

// The hex SHA-1 of `script`, as EVALSHA names it.
std::string ScriptSha1(std::string_view script) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(script.data()), script.size(),
       digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : digest) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

timeval Timeout(int milliseconds) {
  timeval tv;
  tv.tv_sec = milliseconds / 1000;
  tv.tv_usec = (milliseconds % 1000) * 1000;
  return tv;
}

int WholeNumber(const std::string& text, int lowest, int highest,
                const std::string& what, const std::string& url) {
  int value = -1;
  if (!text.empty() && text.size() <= 5 &&
      text.find_first_not_of("0123456789") == std::string::npos) {
    value = std::stoi(text);
  }
  if (value < lowest || value > highest) {
    throw std::invalid_argument(
        "redis_url " + url + ": the " + what + " must be a number from " +
        std::to_string(lowest) + " to " + std::to_string(highest));
  }
  return value;
}

}  // namespace

RedisAddress RedisAddress::Parse(const std::string& url) {
  const std::string scheme = "redis://";
  if (url.compare(0, scheme.size(), scheme) != 0) {
    throw std::invalid_argument("redis_url " + url +
                                " must start with redis://");
  }
  RedisAddress address;
  std::string rest = url.substr(scheme.size());
  if (const std::size_t slash = rest.find('/'); slash != std::string::npos) {
    address.database =
        WholeNumber(rest.substr(slash + 1), 0, 65535, "database", url);
    rest = rest.substr(0, slash);
  }
  if (const std::size_t at = rest.rfind('@'); at != std::string::npos) {
    const std::string credentials = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const std::size_t colon = credentials.find(':');
    if (colon == std::string::npos) {
      address.password = credentials;
    } else {
      address.user = credentials.substr(0, colon);
      address.password = credentials.substr(colon + 1);
    }
  }
  // [v6 address]:port, or host:port.
  std::string port;
  if (!rest.empty() && rest.front() == '[') {
    const std::size_t close = rest.find(']');
    if (close == std::string::npos) {
      throw std::invalid_argument("redis_url " + url + ": no ] after [");
    }
    address.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') {
        throw std::invalid_argument("redis_url " + url + ": text after ]");
      }
      port = rest.substr(close + 2);
    }
  } else {
    const std::size_t colon = rest.find(':');
    address.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
  }
  if (address.host.empty()) {
    throw std::invalid_argument("redis_url " + url + " names no host");
  }
  if (!port.empty()) address.port = WholeNumber(port, 1, 65535, "port", url);
  return address;
}

RedisCounters::RedisCounters(const std::string& url, int timeout_ms)
    : address_(RedisAddress::Parse(url)), timeout_ms_(timeout_ms) {}

RedisCounters::~RedisCounters() { Disconnect(); }

void RedisCounters::Disconnect() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

bool RedisCounters::Connect(std::string* error) {
  if (context_ != nullptr) return true;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_try_) {
    *error = "not retried within a second of the last failure";
    return false;
  }
  next_try_ = now + std::chrono::seconds(1);
  context_ = redisConnectWithTimeout(address_.host.c_str(), address_.port,
                                     Timeout(timeout_ms_));
  if (context_ == nullptr || context_->err != 0) {
    *error = context_ != nullptr ? context_->errstr : "out of memory";
    Disconnect();
    return false;
  }
  redisSetTimeout(context_, Timeout(timeout_ms_));
  // AUTH and SELECT, each an argv (binary-safe, never formatted).
  std::vector<std::vector<std::string>> setup;
  if (!address_.password.empty()) {
    setup.push_back(address_.user.empty()
                        ? std::vector<std::string>{"AUTH", address_.password}
                        : std::vector<std::string>{"AUTH", address_.user,
                                                   address_.password});
  }
  if (address_.database != 0) {
    setup.push_back({"SELECT", std::to_string(address_.database)});
  }
  for (const std::vector<std::string>& command : setup) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const std::string& part : command) {
      argv.push_back(part.data());
      lengths.push_back(part.size());
    }
    Reply reply(static_cast<redisReply*>(redisCommandArgv(
        context_, static_cast<int>(argv.size()), argv.data(), lengths.data())));
    if (!reply || reply->type == REDIS_REPLY_ERROR) {
      *error = command[0] + " failed: " +
               (reply ? std::string(reply->str, reply->len)
                      : std::string(context_->errstr));
      Disconnect();
      return false;
    }
  }
  return true;
}

std::optional<bool> RedisCounters::Spend(const std::string& key, int64_t limit,
                                         int64_t cost,
                                         std::chrono::milliseconds period,
                                         bool peek, std::string* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!Connect(error)) return std::nullopt;
  // By the script's SHA-1, which Redis keeps once it has run it; the first
  // call on a server (or after SCRIPT FLUSH, or a restart) is told
  // NOSCRIPT and sends the script itself.
  static const std::string kScriptSha1 = ScriptSha1(kSpendScript);
  std::string parts[] = {"EVALSHA",
                         kScriptSha1,
                         "1",
                         key,
                         std::to_string(limit),
                         std::to_string(cost),
                         std::to_string(period.count()),
                         peek ? "1" : "0"};
  Reply reply = Command(context_, parts);
  if (reply && reply->type == REDIS_REPLY_ERROR &&
      std::string_view(reply->str, reply->len).substr(0, 8) == "NOSCRIPT") {
    parts[0] = "EVAL";
    parts[1] = kSpendScript;
    reply = Command(context_, parts);
  }
  if (!reply || reply->type != REDIS_REPLY_INTEGER) {
    *error = reply && reply->type == REDIS_REPLY_ERROR
                 ? std::string(reply->str, reply->len)
                 : std::string(context_->errstr);
    // After a timeout or a broken pipe the connection's state is unknown;
    // an error reply leaves it usable, but a fresh one costs little.
    Disconnect();
    return std::nullopt;
  }
  return reply->integer == 1;
}

}  // namespace fanyi
