#include "common/formats/suggestion_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "common/formats/sqlite_file.h"

namespace fanyi {
namespace {

// LibreTranslate's columns, which every suggestions file has.
constexpr const char* kLibreTranslateColumns[] = {"q", "s", "source", "target"};
// fanyi's, with their types: added to a file that lacks them.
constexpr const char* kFanyiColumns[][2] = {{"model", "TEXT"},
                                            {"model_version", "INTEGER"},
                                            {"api_key", "TEXT"},
                                            {"created", "INTEGER"}};

// LibreTranslate's suggestions table's columns; empty when there is none.
// Throws when it is not a plain table, lacks one of LibreTranslate's
// columns, or gives one a default value (rows written short would read
// long), or when the file is not a database.
std::set<std::string> SuggestionColumns(const std::string& path,
                                        sqlite3* database) {
  const std::map<std::string, bool> table =
      SqliteTableColumns(path, database, "suggestions");
  if (table.empty()) return {};
  for (const char* column : kLibreTranslateColumns) {
    const auto found = table.find(column);
    if (found == table.end()) {
      throw std::runtime_error(path + ": its suggestions table has no column " +
                               column);
    }
    if (found->second) {
      throw std::runtime_error(path + ": its suggestions table gives column " +
                               column + " a default value");
    }
  }
  std::set<std::string> columns;
  for (const auto& [name, defaulted] : table) columns.insert(name);
  return columns;
}

// `path` opened as a suggestions file: no value longer than a row of a
// text and a suggestion.
sqlite3* OpenDatabase(const std::string& path, int flags, int busy_ms) {
  return SqliteOpen(path, flags, busy_ms, 4 * kMaxSuggestionBytes);
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
    if (SqliteFirstValue(path, database_, "PRAGMA journal_mode = WAL") !=
        "wal") {
      throw std::runtime_error(path +
                               ": SQLite cannot keep a write-ahead "
                               "log beside it");
    }
    SqliteExecute(path, database_, "PRAGMA synchronous = NORMAL");
    if (columns.empty()) {
      SqliteExecute(
          path, database_,
          "CREATE TABLE suggestions (q TEXT NOT NULL, s TEXT NOT NULL, "
          "source TEXT NOT NULL, target TEXT NOT NULL, model TEXT, "
          "model_version INTEGER, api_key TEXT, created INTEGER)");
    } else {
      for (const auto& [name, type] : kFanyiColumns) {
        if (!columns.count(name)) {
          SqliteExecute(path, database_,
                        std::string("ALTER TABLE suggestions ADD COLUMN ") +
                            name + " " + type);
        }
      }
    }
    rows_ = std::stoll(
        SqliteFirstValue(path, database_, "SELECT count(*) FROM suggestions"));
    const int64_t page_bytes =
        std::stoll(SqliteFirstValue(path, database_, "PRAGMA page_size"));
    SqliteExecute(path, database_,
                  "PRAGMA max_page_count = " + std::to_string(std::max<int64_t>(
                                                   max_bytes / page_bytes, 1)));
    insert_ =
        SqlitePrepare(path, database_,
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
    const std::string check =
        SqliteFirstValue(path, database_, "PRAGMA quick_check");
    if (check != "ok") {
      throw std::runtime_error(path + ": SQLite finds it damaged: " + check);
    }
    if (SuggestionColumns(path, database_).empty()) {
      throw std::runtime_error(path + ": no suggestions table in it");
    }
    select_ = SqlitePrepare(
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
    SqliteFail(path_, database_, "reading its suggestions");
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
  suggestion->text = SqliteText(select_, 1);
  suggestion->suggestion = SqliteText(select_, 2);
  suggestion->source_language = SqliteText(select_, 3);
  suggestion->target_language = SqliteText(select_, 4);
  *row = rowid;
  return true;
}

}  // namespace fanyi
