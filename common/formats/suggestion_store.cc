#include "common/formats/suggestion_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

// LibreTranslate's columns, which every suggestions file has.
constexpr const char* kLibreTranslateColumns[] = {"q", "s", "source", "target"};
// fanyi's, with their types: added to a file that lacks them.
constexpr const char* kFanyiColumns[][2] = {{"model", "TEXT"},
                                            {"model_version", "INTEGER"},
                                            {"api_key", "TEXT"},
                                            {"created", "INTEGER"}};

[[noreturn]] void Fail(const std::string& path, sqlite3* database,
                       const std::string& doing) {
  throw std::runtime_error(path + ": " + doing + ": " +
                           sqlite3_errmsg(database));
}

// `path` opened with `flags`, waiting up to `busy_ms` for another
// program's lock. Defensive: a file from elsewhere cannot make its schema
// run functions, nor hand over a value longer than a row of a text and a
// suggestion.
sqlite3* OpenDatabase(const std::string& path, int flags, int busy_ms) {
  sqlite3* database = nullptr;
  if (const int status =
          sqlite3_open_v2(path.c_str(), &database, flags, nullptr);
      status != SQLITE_OK) {
    const std::string message =
        database != nullptr ? sqlite3_errmsg(database) : sqlite3_errstr(status);
    sqlite3_close(database);
    throw std::runtime_error(path + ": cannot open it as SQLite: " + message);
  }
  sqlite3_busy_timeout(database, busy_ms);
  sqlite3_db_config(database, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(database, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_limit(database, SQLITE_LIMIT_LENGTH,
                static_cast<int>(4 * kMaxSuggestionBytes));
  return database;
}

// Runs one statement, ignoring the rows it returns.
void Execute(const std::string& path, sqlite3* database,
             const std::string& sql) {
  if (sqlite3_exec(database, sql.c_str(), nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    Fail(path, database, sql);
  }
}

// A statement prepared from `sql`.
sqlite3_stmt* Prepare(const std::string& path, sqlite3* database,
                      const std::string& sql) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(database, sql.c_str(), -1, &statement, nullptr) !=
      SQLITE_OK) {
    Fail(path, database, sql);
  }
  return statement;
}

// Column `index` of the row `statement` stands on, as text ("" for NULL).
std::string Text(sqlite3_stmt* statement, int index) {
  const unsigned char* text = sqlite3_column_text(statement, index);
  if (text == nullptr) return "";
  return std::string(
      reinterpret_cast<const char*>(text),
      static_cast<std::size_t>(sqlite3_column_bytes(statement, index)));
}

// The first column of the first row `sql` returns, as text; "" for none.
std::string FirstValue(const std::string& path, sqlite3* database,
                       const std::string& sql) {
  sqlite3_stmt* statement = Prepare(path, database, sql);
  const int status = sqlite3_step(statement);
  const std::string value = status == SQLITE_ROW ? Text(statement, 0) : "";
  sqlite3_finalize(statement);
  if (status != SQLITE_ROW && status != SQLITE_DONE) Fail(path, database, sql);
  return value;
}

// The columns of table "suggestions"; empty when there is none. Throws
// when it is a view or a virtual table (whose rows code computes, without
// end or over a file's own shadow tables), lacks one of LibreTranslate's
// columns, or gives one a default value (rows written short would read
// long), or when the file is not a database.
std::set<std::string> SuggestionColumns(const std::string& path,
                                        sqlite3* database) {
  sqlite3_stmt* kind = Prepare(path, database,
                               "SELECT type, sql FROM sqlite_master WHERE "
                               "name = 'suggestions' COLLATE NOCASE AND "
                               "type IN ('table', 'view')");
  const int status = sqlite3_step(kind);
  const std::string type = status == SQLITE_ROW ? Text(kind, 0) : "";
  const std::string sql = status == SQLITE_ROW ? Text(kind, 1) : "";
  sqlite3_finalize(kind);
  if (status != SQLITE_ROW && status != SQLITE_DONE) {
    Fail(path, database, "reading its schema");
  }
  if (status == SQLITE_DONE) return {};
  if (type != "table") {
    throw std::runtime_error(path + ": its \"suggestions\" is a " + type +
                             ", not a table");
  }
  if (AsciiLowercase(sql.substr(0, 14)) == "create virtual") {
    throw std::runtime_error(path +
                             ": its \"suggestions\" is a virtual table, not "
                             "a table");
  }
  std::set<std::string> columns;
  std::set<std::string> defaulted;
  sqlite3_stmt* info = Prepare(path, database,
                               "SELECT name, dflt_value IS NOT NULL FROM "
                               "pragma_table_info('suggestions')");
  int step = SQLITE_ROW;
  while ((step = sqlite3_step(info)) == SQLITE_ROW) {
    const std::string name = Text(info, 0);
    columns.insert(name);
    if (sqlite3_column_int(info, 1) != 0) defaulted.insert(name);
  }
  sqlite3_finalize(info);
  if (step != SQLITE_DONE) Fail(path, database, "reading its columns");
  for (const char* column : kLibreTranslateColumns) {
    if (!columns.count(column)) {
      throw std::runtime_error(path + ": its suggestions table has no column " +
                               column);
    }
    if (defaulted.count(column)) {
      throw std::runtime_error(path + ": its suggestions table gives column " +
                               column + " a default value");
    }
  }
  return columns;
}

}  // namespace

SuggestionStore::SuggestionStore(const std::string& path, int64_t max_rows,
                                 int64_t max_bytes)
    : path_(path), max_rows_(max_rows) {
  // A request waits a quarter second for the file at most: another
  // program's lock then fails it (503), never the parsing threads.
  database_ =
      OpenDatabase(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 250);
  try {
    const std::set<std::string> columns = SuggestionColumns(path, database_);
    // Readers and the writer do not wait for each other. Synchronous
    // NORMAL: a power cut may lose the last few commits, never corrupt the
    // file; a crash of the server loses none.
    if (FirstValue(path, database_, "PRAGMA journal_mode = WAL") != "wal") {
      throw std::runtime_error(path +
                               ": SQLite cannot keep a write-ahead "
                               "log beside it");
    }
    Execute(path, database_, "PRAGMA synchronous = NORMAL");
    if (columns.empty()) {
      Execute(path, database_,
              "CREATE TABLE suggestions (q TEXT NOT NULL, s TEXT NOT NULL, "
              "source TEXT NOT NULL, target TEXT NOT NULL, model TEXT, "
              "model_version INTEGER, api_key TEXT, created INTEGER)");
    } else {
      for (const auto& [name, type] : kFanyiColumns) {
        if (!columns.count(name)) {
          Execute(path, database_,
                  std::string("ALTER TABLE suggestions ADD COLUMN ") + name +
                      " " + type);
        }
      }
    }
    rows_ = std::stoll(
        FirstValue(path, database_, "SELECT count(*) FROM suggestions"));
    const int64_t page_bytes =
        std::stoll(FirstValue(path, database_, "PRAGMA page_size"));
    Execute(path, database_,
            "PRAGMA max_page_count = " +
                std::to_string(std::max<int64_t>(max_bytes / page_bytes, 1)));
    insert_ = Prepare(path, database_,
                      "INSERT INTO suggestions (q, s, source, target, model, "
                      "model_version, api_key, created) VALUES "
                      "(?, ?, ?, ?, ?, ?, ?, ?)");
  } catch (...) {
    sqlite3_close(database_);
    throw;
  }
}

SuggestionStore::~SuggestionStore() {
  sqlite3_finalize(insert_);
  sqlite3_close(database_);
}

SuggestionStore::Outcome SuggestionStore::Add(const Suggestion& suggestion) {
  if (suggestion.text.size() > kMaxSuggestionBytes ||
      suggestion.suggestion.size() > kMaxSuggestionBytes) {
    return Outcome::kTooLarge;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (rows_ >= max_rows_) return Outcome::kFull;
  // Bound as they are (SQLITE_STATIC): the strings outlive the step.
  int bound = SQLITE_OK;
  auto bind_text = [&](int index, const std::string& text) {
    if (bound == SQLITE_OK) {
      bound = sqlite3_bind_text(insert_, index, text.data(),
                                static_cast<int>(text.size()), SQLITE_STATIC);
    }
  };
  bind_text(1, suggestion.text);
  bind_text(2, suggestion.suggestion);
  bind_text(3, suggestion.source_language);
  bind_text(4, suggestion.target_language);
  bind_text(5, suggestion.model);
  if (bound == SQLITE_OK) {
    bound = sqlite3_bind_int64(insert_, 6, suggestion.model_version);
  }
  if (suggestion.api_key.empty()) {
    if (bound == SQLITE_OK) bound = sqlite3_bind_null(insert_, 7);
  } else {
    bind_text(7, suggestion.api_key);
  }
  if (bound == SQLITE_OK) {
    bound = sqlite3_bind_int64(insert_, 8, suggestion.created);
  }
  const int status = bound == SQLITE_OK ? sqlite3_step(insert_) : bound;
  const std::string message = sqlite3_errmsg(database_);
  sqlite3_reset(insert_);
  sqlite3_clear_bindings(insert_);
  switch (status & 0xff) {
    case SQLITE_DONE:
      ++rows_;
      return Outcome::kAdded;
    case SQLITE_FULL:
      return Outcome::kFull;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Outcome::kBusy;
    default:
      throw std::runtime_error(path_ + ": adding a suggestion: " + message);
  }
}

int64_t SuggestionStore::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_;
}

SuggestionReader::SuggestionReader(const std::string& path) : path_(path) {
  database_ = OpenDatabase(path, SQLITE_OPEN_READONLY, 5000);
  try {
    // Linear in the file: damage a plain scan would not notice (pages
    // shared by several parents, which could repeat rows without end).
    const std::string check = FirstValue(path, database_, "PRAGMA quick_check");
    if (check != "ok") {
      throw std::runtime_error(path + ": SQLite finds it damaged: " + check);
    }
    if (SuggestionColumns(path, database_).empty()) {
      throw std::runtime_error(path + ": no suggestions table in it");
    }
    select_ = Prepare(
        path, database_,
        "SELECT rowid, q, s, source, target FROM suggestions ORDER BY rowid");
  } catch (...) {
    sqlite3_close(database_);
    throw;
  }
}

SuggestionReader::~SuggestionReader() {
  sqlite3_finalize(select_);
  sqlite3_close(database_);
}

bool SuggestionReader::Next(Suggestion* suggestion, int64_t* row) {
  // A statement stepped after its end (or an error) would start again.
  if (done_) return false;
  const int status = sqlite3_step(select_);
  if (status != SQLITE_ROW) {
    done_ = true;
    if (status == SQLITE_DONE) return false;
    Fail(path_, database_, "reading its suggestions");
  }
  const int64_t rowid = sqlite3_column_int64(select_, 0);
  for (int column = 1; column <= 4; ++column) {
    const auto bytes =
        static_cast<std::size_t>(sqlite3_column_bytes(select_, column));
    if (bytes > kMaxSuggestionBytes) {
      done_ = true;
      throw std::runtime_error(
          path_ + ": row " + std::to_string(rowid) + " holds " +
          std::to_string(bytes) + " bytes in a text; at most " +
          std::to_string(kMaxSuggestionBytes) + " are read");
    }
  }
  *suggestion = Suggestion();
  suggestion->text = Text(select_, 1);
  suggestion->suggestion = Text(select_, 2);
  suggestion->source_language = Text(select_, 3);
  suggestion->target_language = Text(select_, 4);
  *row = rowid;
  return true;
}

}  // namespace fanyi
