#include "server/http/api_access.h"

#include <algorithm>
#include <array>
#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "server/http/libretranslate_fields.h"

namespace fanyi {

ApiAccess::ApiAccess(ApiAccessOptions options, HttpMetrics& metrics)
    : options_(std::move(options)),
      store_(options_.api_keys_db.empty()
                 ? nullptr
                 : std::make_unique<ApiKeyStore>(options_.api_keys_db)),
      requests_(std::chrono::minutes(1)),
      hourly_requests_(std::chrono::hours(1)),
      daily_requests_(std::chrono::hours(24)),
      characters_(std::chrono::hours(24)),
      violations_(options_.ban_forgiveness *
                  std::max<int64_t>(options_.ban_after, 1)),
      redis_(options_.redis_url.empty()
                 ? nullptr
                 : std::make_unique<RedisCounters>(options_.redis_url)),
      metrics_(metrics) {
  if (redis_ != nullptr) metrics_.RecordLimitStore(true);
}

bool ApiAccess::Spend(RequestRateLimiter& local, const char* name,
                      const std::string& client, int64_t limit, int64_t cost,
                      bool peek) const {
  if (limit <= 0) return true;
  if (redis_ != nullptr) {
    std::string error;
    const std::optional<bool> shared = redis_->Spend(
        std::string("fanyi:limit:") + name + ":" + client, limit, cost,
        std::chrono::duration_cast<std::chrono::milliseconds>(local.period()),
        peek, &error);
    metrics_.RecordLimitStore(shared.has_value());
    if (redis_up_.exchange(shared.has_value()) != shared.has_value()) {
      if (shared) {
        std::cerr << "fanyi-server: Redis at " << options_.redis_url
                  << " answers again: limits are shared again" << std::endl;
      } else {
        std::cerr << "fanyi-server: Redis at " << options_.redis_url
                  << " does not answer (" << error
                  << "): each replica counts its own limits until it does"
                  << std::endl;
      }
    }
    if (shared) return *shared;
  }
  return peek ? !local.WouldRefuse(client, limit, cost)
              : local.Admit(client, limit, cost);
}

void ApiAccess::Refuse(const std::string& address,
                       const std::string& message) const {
  Spend(violations_, "violations", address, options_.ban_after, 1);
  throw HttpError(429, message);
}

bool ApiAccess::keys_in_use() const {
  return store_ != nullptr || !options_.required_keys.empty();
}

bool ApiAccess::key_required() const {
  return !options_.required_keys.empty() ||
         (store_ != nullptr && options_.require_api_key);
}

std::string ClientOfAddress(const std::string& peer) {
  boost::system::error_code error;
  const boost::asio::ip::address address =
      boost::asio::ip::make_address(peer, error);
  if (error || !address.is_v6() || address.to_v6().is_v4_mapped()) {
    return "address " + peer;
  }
  // One network of /64, as an ISP hands one to a household, is one
  // client: its 2^64 addresses would otherwise each be a new one.
  std::array<unsigned char, 16> bytes = address.to_v6().to_bytes();
  std::fill(bytes.begin() + 8, bytes.end(), 0);
  return "address " + boost::asio::ip::address_v6(bytes).to_string() + "/64";
}

ApiKeyLimits ApiAccess::LimitsOf(const nlohmann::json& sent) const {
  if (!keys_in_use()) return {};  // Keys off: a key sent means nothing.
  if (sent.is_null() ||
      (sent.is_string() && sent.get_ref<const std::string&>().empty())) {
    if (!options_.required_keys.empty()) {
      throw HttpError(403, "Invalid API key");
    }
    if (options_.require_api_key) {
      throw HttpError(400,
                      "Please contact the server operator to get an API key");
    }
    return {};
  }
  if (!sent.is_string()) throw HttpError(403, "Invalid API key");
  const std::string& key = sent.get_ref<const std::string&>();
  if (options_.required_keys.count(key)) return {};
  if (store_ != nullptr) {
    std::optional<ApiKeyLimits> limits;
    try {
      limits = store_->Find(key);
    } catch (const std::runtime_error& e) {
      // The file's path and SQLite's words are the operator's to read.
      std::cerr << "fanyi-server: " << e.what() << std::endl;
      throw HttpError(503, "API keys cannot be read now; try again later");
    }
    if (limits) return *limits;
  }
  throw HttpError(403, "Invalid API key");
}

ApiCaller ApiAccess::Admit(const RequestFields& fields, const std::string& peer,
                           const RequestCost& cost) const {
  const std::string address = ClientOfAddress(peer);
  if (!Spend(violations_, "violations", address, options_.ban_after, 1,
             /*peek=*/true)) {
    throw HttpError(403, "Too many request limits violations");
  }
  const nlohmann::json& sent = fields.Get("api_key");
  ApiKeyLimits limits;
  try {
    limits = LimitsOf(sent);
  } catch (const HttpError& e) {
    // A refused key still spends its address's request, as LibreTranslate
    // counts every request: guessing keys is limited like asking.
    if (!Spend(requests_, "minute", address, options_.requests_per_minute, 1)) {
      Refuse(address,
             "Slowdown: " + std::to_string(options_.requests_per_minute) +
                 " per 1 minute");
    }
    throw;
  }
  ApiCaller caller;
  // Counted per known key, else per address: made-up keys are refused
  // above, so they make no new clients.
  if (keys_in_use() && sent.is_string() &&
      !sent.get_ref<const std::string&>().empty()) {
    caller.api_key = sent.get<std::string>();
    caller.client = "key " + caller.api_key;
  } else {
    caller.client = address;
  }
  // A key's own limit of 0 is none at all, as LibreTranslate reads
  // "0 per minute"; the server's 0 is no limit.
  const int64_t per_minute =
      limits.requests_per_minute.value_or(options_.requests_per_minute);
  if ((limits.requests_per_minute && per_minute == 0) ||
      !Spend(requests_, "minute", caller.client, per_minute, 1)) {
    Refuse(address,
           "Slowdown: " + std::to_string(per_minute) + " per 1 minute");
  }
  if (!limits.requests_per_minute) {
    if (!Spend(hourly_requests_, "hour", caller.client,
               options_.requests_per_hour, 1)) {
      Refuse(address,
             "Slowdown: " + std::to_string(options_.requests_per_hour) +
                 " per 1 hour");
    }
    if (!Spend(daily_requests_, "day", caller.client, options_.requests_per_day,
               1)) {
      Refuse(address, "Slowdown: " + std::to_string(options_.requests_per_day) +
                          " per 1 day");
    }
  }
  // LibreTranslate's char_limit: each text of the request.
  if (limits.chars_per_request && *limits.chars_per_request > 0 &&
      cost.longest_text > *limits.chars_per_request) {
    throw HttpError(400, "Invalid request: request (" +
                             std::to_string(cost.longest_text) +
                             ") exceeds text limit (" +
                             std::to_string(*limits.chars_per_request) + ")");
  }
  const int64_t per_day = limits.chars_per_day.value_or(options_.chars_per_day);
  if (!Spend(characters_, "characters", caller.client, per_day,
             cost.characters)) {
    Refuse(address,
           "Slowdown: " + std::to_string(per_day) + " characters per 1 day");
  }
  return caller;
}

std::set<std::string> ReadApiKeysFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read API keys file " + path);
  std::set<std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::size_t last = line.find_last_not_of(" \t\r");
    keys.insert(line.substr(first, last - first + 1));
  }
  if (keys.empty()) {
    throw std::runtime_error("API keys file " + path + " holds no key");
  }
  return keys;
}

}  // namespace fanyi
