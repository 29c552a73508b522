#include "common/formats/suggestion_store.h"

#include <sqlite3.h>

#include <set>
#include <stdexcept>
#include <string>

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

// `path` opened with `flags`, waiting up to 5 s for another process's lock
// (the server writing while fanyi-train reads). Defensive: a file from
// elsewhere cannot make its schema run functions, nor hand over a value
// longer than a text and a suggestion may be.
sqlite3* OpenDatabase(const std::string& path, int flags) {
  sqlite3* database = nullptr;
  if (const int status =
          sqlite3_open_v2(path.c_str(), &database, flags, nullptr);
      status != SQLITE_OK) {
    const std::string message =
        database != nullptr ? sqlite3_errmsg(database) : sqlite3_errstr(status);
    sqlite3_close(database);
    throw std::runtime_error(path + ": cannot open it as SQLite: " + message);
  }
  sqlite3_busy_timeout(database, 5000);
  sqlite3_db_config(database, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(database, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  // A row holds a text, its suggestion and a few short fields.
  sqlite3_limit(database, SQLITE_LIMIT_LENGTH, 3 * kMaxSuggestionBytes);
  return database;
}

// Runs one statement that returns no rows.
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

// The columns of table "suggestions"; empty when there is no such table.
// Throws when "suggestions" is something other than a table (a view could
// compute rows without end), or when the file is not a database.
std::set<std::string> SuggestionColumns(const std::string& path,
                                        sqlite3* database) {
  sqlite3_stmt* kind =
      Prepare(path, database,
              "SELECT type FROM sqlite_schema WHERE name = 'suggestions'");
  const int status = sqlite3_step(kind);
  const std::string type = status == SQLITE_ROW ? Text(kind, 0) : "";
  sqlite3_finalize(kind);
  if (status != SQLITE_ROW && status != SQLITE_DONE) {
    Fail(path, database, "reading its schema");
  }
  if (status == SQLITE_DONE) return {};
  if (type != "table") {
    throw std::runtime_error(path + ": its \"suggestions\" is a " + type +
                             ", not a table");
  }
  std::set<std::string> columns;
  sqlite3_stmt* info = Prepare(path, database,
                               "SELECT name FROM pragma_table_info("
                               "'suggestions')");
  int step = SQLITE_ROW;
  while ((step = sqlite3_step(info)) == SQLITE_ROW) {
    if (const unsigned char* name = sqlite3_column_text(info, 0)) {
      columns.insert(reinterpret_cast<const char*>(name));
    }
  }
  sqlite3_finalize(info);
  if (step != SQLITE_DONE) Fail(path, database, "reading its columns");
  for (const char* column : kLibreTranslateColumns) {
    if (!columns.count(column)) {
      throw std::runtime_error(path + ": its suggestions table has no column " +
                               column);
    }
  }
  return columns;
}

}  // namespace

SuggestionStore::SuggestionStore(const std::string& path, int64_t max_rows)
    : path_(path), max_rows_(max_rows) {
  database_ = OpenDatabase(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  try {
    const std::set<std::string> columns = SuggestionColumns(path, database_);
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
    sqlite3_stmt* count =
        Prepare(path, database_, "SELECT count(*) FROM suggestions");
    const int status = sqlite3_step(count);
    rows_ = sqlite3_column_int64(count, 0);
    sqlite3_finalize(count);
    if (status != SQLITE_ROW) Fail(path, database_, "counting its rows");
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

bool SuggestionStore::Add(const Suggestion& suggestion) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rows_ >= max_rows_) return false;
  // Bound as they are (SQLITE_STATIC): the strings outlive the step.
  auto bind_text = [this](int index, const std::string& text) {
    sqlite3_bind_text(insert_, index, text.data(),
                      static_cast<int>(text.size()), SQLITE_STATIC);
  };
  bind_text(1, suggestion.text);
  bind_text(2, suggestion.suggestion);
  bind_text(3, suggestion.source_language);
  bind_text(4, suggestion.target_language);
  bind_text(5, suggestion.model);
  sqlite3_bind_int64(insert_, 6, suggestion.model_version);
  if (suggestion.api_key.empty()) {
    sqlite3_bind_null(insert_, 7);
  } else {
    bind_text(7, suggestion.api_key);
  }
  sqlite3_bind_int64(insert_, 8, suggestion.created);
  const int status = sqlite3_step(insert_);
  sqlite3_reset(insert_);
  sqlite3_clear_bindings(insert_);
  if (status != SQLITE_DONE) Fail(path_, database_, "adding a suggestion");
  ++rows_;
  return true;
}

int64_t SuggestionStore::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_;
}

SuggestionReader::SuggestionReader(const std::string& path) : path_(path) {
  database_ = OpenDatabase(path, SQLITE_OPEN_READONLY);
  try {
    if (SuggestionColumns(path, database_).empty()) {
      throw std::runtime_error(path + ": no suggestions table in it");
    }
    select_ = Prepare(path, database_,
                      "SELECT q, s, source, target FROM suggestions");
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
  // A statement stepped after its end would start again.
  if (done_) return false;
  const int status = sqlite3_step(select_);
  if (status == SQLITE_DONE) {
    done_ = true;
    return false;
  }
  if (status != SQLITE_ROW) {
    Fail(path_, database_, "reading row " + std::to_string(row_ + 1));
  }
  *suggestion = Suggestion();
  suggestion->text = Text(select_, 0);
  suggestion->suggestion = Text(select_, 1);
  suggestion->source_language = Text(select_, 2);
  suggestion->target_language = Text(select_, 3);
  for (const std::string* value :
       {&suggestion->text, &suggestion->suggestion}) {
    if (value->size() > kMaxSuggestionBytes) {
      throw std::runtime_error(
          path_ + ": row " + std::to_string(row_ + 1) + " holds " +
          std::to_string(value->size()) + " bytes in a text; at most " +
          std::to_string(kMaxSuggestionBytes) + " are read");
    }
  }
  *row = ++row_;
  return true;
}

}  // namespace fanyi
