// API keys with their limits, in a SQLite file laid out as LibreTranslate's
// api_keys.db: table "api_keys" with its columns api_key, req_limit
// (requests a minute) and char_limit (characters a request), and fanyi's
// chars_per_day beside them. LibreTranslate's own file serves as it is;
// fanyi-keys manages either while a server reads it.
#ifndef FANYI_SERVER_HTTP_API_KEY_STORE_H_
#define FANYI_SERVER_HTTP_API_KEY_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace fanyi {

// One key's limits; each one missing takes the server's default. 0 is no
// limit.
struct ApiKeyLimits {
  std::optional<int64_t> requests_per_minute;  // req_limit
  std::optional<int64_t> chars_per_request;    // char_limit
  std::optional<int64_t> chars_per_day;        // chars_per_day

  bool operator==(const ApiKeyLimits& other) const {
    return requests_per_minute == other.requests_per_minute &&
           chars_per_request == other.chars_per_request &&
           chars_per_day == other.chars_per_day;
  }
};

// A key and its limits.
struct ApiKeyEntry {
  std::string key;
  ApiKeyLimits limits;
};

// The longest key a store takes (LibreTranslate's are UUIDs, 36 bytes).
inline constexpr std::size_t kMaxApiKeyBytes = 256;

// An API keys file open for reading and changing, in SQLite's write-ahead
// log mode, so that a server reading it and fanyi-keys changing it do not
// wait for each other; every Find sees what was committed before it.
// Thread-safe.
class ApiKeyStore {
 public:
  // Opens `path`, creating the file and its table when missing; a
  // LibreTranslate file gains the column chars_per_day. Throws
  // std::runtime_error naming the file when it cannot be opened or its
  // api_keys is not a table with LibreTranslate's columns.
  explicit ApiKeyStore(const std::string& path);
  ~ApiKeyStore();

  ApiKeyStore(const ApiKeyStore&) = delete;
  ApiKeyStore& operator=(const ApiKeyStore&) = delete;

  // `key`'s limits; nullopt when the file does not hold it. Throws
  // std::runtime_error naming the file when a limit is not a whole number
  // from 0 (a file written by hand), or SQLite fails.
  std::optional<ApiKeyLimits> Find(const std::string& key) const;

  // Adds `key`, or replaces its limits. Throws std::invalid_argument for a
  // key that is empty, longer than kMaxApiKeyBytes or holds a control
  // character or a space, or a negative limit; std::runtime_error naming
  // the file when a LibreTranslate file needs a request limit and none is
  // given, or SQLite fails.
  void Put(const std::string& key, const ApiKeyLimits& limits);

  // Changes `key`'s limits in one transaction: `change` gets them (nullopt
  // when the file does not hold the key) and returns whether to write
  // what it leaves (nullopt: nothing). Returns whether it wrote. Throws as
  // Put.
  bool Update(const std::string& key,
              const std::function<bool(std::optional<ApiKeyLimits>*)>& change);

  // Removes `key`; false when the file did not hold it.
  bool Remove(const std::string& key);

  // Every key, in the order of their text.
  std::vector<ApiKeyEntry> List() const;

 private:
  // Find, with mutex_ held.
  std::optional<ApiKeyLimits> FindHeld(const std::string& key) const;
  // The limits of the row `statement` stands on, from column `first` on.
  ApiKeyLimits ReadLimits(sqlite3_stmt* statement, int first) const;

  const std::string path_;
  mutable std::mutex mutex_;
  sqlite3* database_ = nullptr;   // Guarded by mutex_.
  sqlite3_stmt* find_ = nullptr;  // Guarded by mutex_.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_API_KEY_STORE_H_
