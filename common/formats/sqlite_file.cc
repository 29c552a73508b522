#include "common/formats/sqlite_file.h"

#include <sqlite3.h>

#include <stdexcept>

#include "common/text/utf8.h"

namespace fanyi {

void SqliteFail(const std::string& path, sqlite3* database,
                const std::string& doing) {
  throw std::runtime_error(path + ": " + doing + ": " +
                           sqlite3_errmsg(database));
}

sqlite3* SqliteOpen(const std::string& path, int flags, int busy_ms,
                    std::size_t max_value_bytes) {
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
                static_cast<int>(max_value_bytes));
  return database;
}

void SqliteExecute(const std::string& path, sqlite3* database,
                   const std::string& sql) {
  if (sqlite3_exec(database, sql.c_str(), nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    SqliteFail(path, database, sql);
  }
}

sqlite3_stmt* SqlitePrepare(const std::string& path, sqlite3* database,
                            const std::string& sql) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(database, sql.c_str(), -1, &statement, nullptr) !=
      SQLITE_OK) {
    SqliteFail(path, database, sql);
  }
  return statement;
}

std::string SqliteText(sqlite3_stmt* statement, int index) {
  const unsigned char* text = sqlite3_column_text(statement, index);
  if (text == nullptr) return "";
  return std::string(
      reinterpret_cast<const char*>(text),
      static_cast<std::size_t>(sqlite3_column_bytes(statement, index)));
}

std::string SqliteFirstValue(const std::string& path, sqlite3* database,
                             const std::string& sql) {
  sqlite3_stmt* statement = SqlitePrepare(path, database, sql);
  const int status = sqlite3_step(statement);
  const std::string value =
      status == SQLITE_ROW ? SqliteText(statement, 0) : "";
  sqlite3_finalize(statement);
  if (status != SQLITE_ROW && status != SQLITE_DONE) {
    SqliteFail(path, database, sql);
  }
  return value;
}

std::map<std::string, bool> SqliteTableColumns(const std::string& path,
                                               sqlite3* database,
                                               const std::string& table) {
  sqlite3_stmt* kind = SqlitePrepare(
      path, database,
      "SELECT type, sql FROM sqlite_master WHERE name = ?1 COLLATE NOCASE "
      "AND type IN ('table', 'view')");
  int status = sqlite3_bind_text(kind, 1, table.data(),
                                 static_cast<int>(table.size()), SQLITE_STATIC);
  if (status == SQLITE_OK) status = sqlite3_step(kind);
  const std::string type = status == SQLITE_ROW ? SqliteText(kind, 0) : "";
  const std::string sql = status == SQLITE_ROW ? SqliteText(kind, 1) : "";
  sqlite3_finalize(kind);
  if (status != SQLITE_ROW && status != SQLITE_DONE) {
    SqliteFail(path, database, "reading its schema");
  }
  if (status == SQLITE_DONE) return {};
  if (type != "table") {
    throw std::runtime_error(path + ": its \"" + table + "\" is a " + type +
                             ", not a table");
  }
  if (AsciiLowercase(sql.substr(0, 14)) == "create virtual") {
    throw std::runtime_error(path + ": its \"" + table +
                             "\" is a virtual table, not a table");
  }
  std::map<std::string, bool> columns;
  sqlite3_stmt* info = SqlitePrepare(
      path, database,
      "SELECT name, dflt_value IS NOT NULL FROM pragma_table_info(?1)");
  int step = sqlite3_bind_text(info, 1, table.data(),
                               static_cast<int>(table.size()), SQLITE_STATIC);
  if (step == SQLITE_OK) step = SQLITE_ROW;
  while (step == SQLITE_ROW && (step = sqlite3_step(info)) == SQLITE_ROW) {
    columns[SqliteText(info, 0)] = sqlite3_column_int(info, 1) != 0;
  }
  sqlite3_finalize(info);
  if (step != SQLITE_DONE) SqliteFail(path, database, "reading its columns");
  return columns;
}

}  // namespace fanyi
