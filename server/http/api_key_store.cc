#include "server/http/api_key_store.h"

#include <sqlite3.h>

#include <functional>
#include <map>
#include <stdexcept>

#include "common/formats/sqlite_file.h"

namespace fanyi {
namespace {

// The limit columns, in the order every statement here reads them.
constexpr const char* kLimitColumns[] = {"req_limit", "char_limit",
                                         "chars_per_day"};

// A key is printable ASCII without spaces: what a client can send in a
// form field or JSON alike, and an operator type in a shell.
void CheckKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxApiKeyBytes) {
    throw std::invalid_argument(
        "an API key has 1 to " + std::to_string(kMaxApiKeyBytes) +
        " characters, not " + std::to_string(key.size()));
  }
  for (const char c : key) {
    if (c < 0x21 || c > 0x7e) {
      throw std::invalid_argument(
          "an API key holds printable ASCII characters only, without spaces");
    }
  }
}

std::optional<int64_t> Limit(const std::optional<int64_t>& limit,
                             const char* name) {
  if (limit && *limit < 0) {
    throw std::invalid_argument(std::string(name) + " must not be negative");
  }
  return limit;
}

// Binds `key` and then `limits` from index 1 on; false when SQLite fails.
bool BindKeyAndLimits(sqlite3_stmt* statement, const std::string& key,
                      const ApiKeyLimits& limits) {
  if (sqlite3_bind_text(statement, 1, key.data(), static_cast<int>(key.size()),
                        SQLITE_STATIC) != SQLITE_OK) {
    return false;
  }
  int index = 2;
  for (const std::optional<int64_t>* limit :
       {&limits.requests_per_minute, &limits.chars_per_request,
        &limits.chars_per_day}) {
    const int status = *limit ? sqlite3_bind_int64(statement, index, **limit)
                              : sqlite3_bind_null(statement, index);
    if (status != SQLITE_OK) return false;
    ++index;
  }
  return true;
}

}  // namespace

ApiKeyStore::ApiKeyStore(const std::string& path) : path_(path) {
  // A request waits a quarter second at most for fanyi-keys' write.
  database_ = SqliteOpen(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 250,
                         64 << 10);
  try {
    // Outside a transaction, as SQLite needs; once set, it stays in the file.
    // Switching takes the file alone, which SQLite does not wait for: a
    // program opening a new file at the same moment is waited for here,
    // for a second at most.
    std::string mode;
    for (int attempt = 0; attempt < 100; ++attempt) {
      try {
        mode = SqliteFirstValue(path, database_, "PRAGMA journal_mode = WAL");
        break;
      } catch (const std::runtime_error&) {
        if ((sqlite3_errcode(database_) & 0xff) != SQLITE_BUSY ||
            attempt == 99) {
          throw;
        }
        sqlite3_sleep(10);
      }
    }
    if (mode != "wal") {
      throw std::runtime_error(path +
                               ": SQLite cannot keep a write-ahead log "
                               "beside it");
    }
    // Read and made in one transaction: a server and fanyi-keys starting on
    // a new file at once make its table once.
    SqliteExecute(path, database_, "BEGIN IMMEDIATE");
    try {
      const std::map<std::string, bool> columns =
          SqliteTableColumns(path, database_, "api_keys");
      if (columns.empty()) {
        // LibreTranslate's table, its request limit free to be NULL (the
        // server's default) and fanyi's column beside.
        SqliteExecute(path, database_,
                      "CREATE TABLE api_keys (\"api_key\" TEXT NOT NULL, "
                      "\"req_limit\" INTEGER, \"char_limit\" INTEGER DEFAULT "
                      "NULL, \"chars_per_day\" INTEGER DEFAULT NULL, PRIMARY "
                      "KEY(\"api_key\"))");
      } else {
        for (const char* needed : {"api_key", "req_limit"}) {
          if (!columns.count(needed)) {
            throw std::runtime_error(
                path + ": its api_keys table has no column " + needed);
          }
        }
        for (const char* added : {"char_limit", "chars_per_day"}) {
          if (!columns.count(added)) {
            SqliteExecute(path, database_,
                          std::string("ALTER TABLE api_keys ADD COLUMN \"") +
                              added + "\" INTEGER DEFAULT NULL");
          }
        }
      }
      SqliteExecute(path, database_, "COMMIT");
    } catch (...) {
      sqlite3_exec(database_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    find_ = SqlitePrepare(path, database_,
                          "SELECT req_limit, char_limit, chars_per_day FROM "
                          "api_keys WHERE api_key = ?");
  } catch (...) {
    sqlite3_close(database_);
    throw;
  }
}

ApiKeyStore::~ApiKeyStore() {
  sqlite3_finalize(find_);
  sqlite3_close(database_);
}

ApiKeyLimits ApiKeyStore::ReadLimits(sqlite3_stmt* statement, int first) const {
  ApiKeyLimits limits;
  std::optional<int64_t>* values[] = {&limits.requests_per_minute,
                                      &limits.chars_per_request,
                                      &limits.chars_per_day};
  for (int i = 0; i < 3; ++i) {
    const int type = sqlite3_column_type(statement, first + i);
    if (type == SQLITE_NULL) continue;
    const int64_t value = sqlite3_column_int64(statement, first + i);
    if (type != SQLITE_INTEGER || value < 0) {
      throw std::runtime_error(path_ + ": an API key's " + kLimitColumns[i] +
                               " is not a whole number from 0");
    }
    *values[i] = value;
  }
  return limits;
}

std::optional<ApiKeyLimits> ApiKeyStore::Find(const std::string& key) const {
  if (key.empty() || key.size() > kMaxApiKeyBytes) return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex_);
  return FindHeld(key);
}

std::optional<ApiKeyLimits> ApiKeyStore::FindHeld(
    const std::string& key) const {
  std::optional<ApiKeyLimits> found;
  int status = sqlite3_bind_text(find_, 1, key.data(),
                                 static_cast<int>(key.size()), SQLITE_STATIC);
  if (status == SQLITE_OK) status = sqlite3_step(find_);
  try {
    if (status == SQLITE_ROW) found = ReadLimits(find_, 0);
  } catch (...) {
    sqlite3_reset(find_);
    sqlite3_clear_bindings(find_);
    throw;
  }
  const std::string message = sqlite3_errmsg(database_);
  sqlite3_reset(find_);
  sqlite3_clear_bindings(find_);
  if (status != SQLITE_ROW && status != SQLITE_DONE) {
    throw std::runtime_error(path_ + ": looking up an API key: " + message);
  }
  return found;
}

void ApiKeyStore::Put(const std::string& key, const ApiKeyLimits& limits) {
  Update(key, [&limits](std::optional<ApiKeyLimits>* held) {
    *held = limits;
    return true;
  });
}

bool ApiKeyStore::Update(
    const std::string& key,
    const std::function<bool(std::optional<ApiKeyLimits>*)>& change) {
  CheckKey(key);
  std::lock_guard<std::mutex> lock(mutex_);
  // Read and written in one transaction: two changes at once both hold.
  SqliteExecute(path_, database_, "BEGIN IMMEDIATE");
  sqlite3_stmt* remove = nullptr;
  sqlite3_stmt* insert = nullptr;
  try {
    std::optional<ApiKeyLimits> held = FindHeld(key);
    if (!change(&held) || !held) {
      SqliteExecute(path_, database_, "ROLLBACK");
      return false;
    }
    const ApiKeyLimits& limits = *held;
    Limit(limits.requests_per_minute, "requests_per_minute");
    Limit(limits.chars_per_request, "chars_per_request");
    Limit(limits.chars_per_day, "chars_per_day");
    // As LibreTranslate does: the old row out, the new one in.
    remove = SqlitePrepare(path_, database_,
                           "DELETE FROM api_keys WHERE api_key = ?");
    insert = SqlitePrepare(path_, database_,
                           "INSERT INTO api_keys (api_key, req_limit, "
                           "char_limit, chars_per_day) VALUES (?, ?, ?, ?)");
    if (!BindKeyAndLimits(insert, key, limits) ||
        sqlite3_bind_text(remove, 1, key.data(), static_cast<int>(key.size()),
                          SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_step(remove) != SQLITE_DONE) {
      SqliteFail(path_, database_, "adding an API key");
    }
    if (sqlite3_step(insert) != SQLITE_DONE) {
      if (sqlite3_extended_errcode(database_) == SQLITE_CONSTRAINT_NOTNULL &&
          !limits.requests_per_minute) {
        throw std::runtime_error(
            path_ +
            ": its api_keys table (LibreTranslate's) needs every key's "
            "request limit: give requests_per_minute");
      }
      SqliteFail(path_, database_, "adding an API key");
    }
    // Finalized once: the handler below must not finalize them again.
    sqlite3_finalize(remove);
    remove = nullptr;
    sqlite3_finalize(insert);
    insert = nullptr;
    SqliteExecute(path_, database_, "COMMIT");
    return true;
  } catch (...) {
    sqlite3_finalize(remove);
    sqlite3_finalize(insert);
    sqlite3_exec(database_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

bool ApiKeyStore::Remove(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  sqlite3_stmt* remove =
      SqlitePrepare(path_, database_, "DELETE FROM api_keys WHERE api_key = ?");
  int status = sqlite3_bind_text(remove, 1, key.data(),
                                 static_cast<int>(key.size()), SQLITE_STATIC);
  if (status == SQLITE_OK) status = sqlite3_step(remove);
  sqlite3_finalize(remove);
  if (status != SQLITE_DONE) {
    SqliteFail(path_, database_, "removing an API key");
  }
  return sqlite3_changes(database_) > 0;
}

std::vector<ApiKeyEntry> ApiKeyStore::List() const {
  std::lock_guard<std::mutex> lock(mutex_);
  sqlite3_stmt* select =
      SqlitePrepare(path_, database_,
                    "SELECT api_key, req_limit, char_limit, chars_per_day "
                    "FROM api_keys ORDER BY api_key");
  std::vector<ApiKeyEntry> entries;
  int status = SQLITE_ROW;
  try {
    while ((status = sqlite3_step(select)) == SQLITE_ROW) {
      entries.push_back({SqliteText(select, 0), ReadLimits(select, 1)});
    }
  } catch (...) {
    sqlite3_finalize(select);
    throw;
  }
  sqlite3_finalize(select);
  if (status != SQLITE_DONE) SqliteFail(path_, database_, "listing API keys");
  return entries;
}

}  // namespace fanyi
