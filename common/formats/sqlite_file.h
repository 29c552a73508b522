// The few SQLite calls fanyi's files share (users' suggestions, API keys):
// opening a file defensively, running and preparing statements, and
// checking that a table from elsewhere is a plain table.
#ifndef FANYI_COMMON_FORMATS_SQLITE_FILE_H_
#define FANYI_COMMON_FORMATS_SQLITE_FILE_H_

#include <cstddef>
#include <map>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace fanyi {

// Throws std::runtime_error "`path`: `doing`: SQLite's message".
[[noreturn]] void SqliteFail(const std::string& path, sqlite3* database,
                             const std::string& doing);

// `path` opened with SQLite's `flags`, waiting up to `busy_ms` for another
// program's lock. Defensive: a file from elsewhere cannot make its schema
// run functions, nor hand over a value longer than `max_value_bytes`.
// Throws std::runtime_error naming the file.
sqlite3* SqliteOpen(const std::string& path, int flags, int busy_ms,
                    std::size_t max_value_bytes);

// Runs one statement, ignoring the rows it returns.
void SqliteExecute(const std::string& path, sqlite3* database,
                   const std::string& sql);

// A statement prepared from `sql`; the caller finalizes it.
sqlite3_stmt* SqlitePrepare(const std::string& path, sqlite3* database,
                            const std::string& sql);

// Column `index` of the row `statement` stands on, as text ("" for NULL).
std::string SqliteText(sqlite3_stmt* statement, int index);

// The first column of the first row `sql` returns, as text; "" for none.
std::string SqliteFirstValue(const std::string& path, sqlite3* database,
                             const std::string& sql);

// The columns of `table`, each with
// whether it has a default value; empty when there is no such table.
// Throws when it is a view or a virtual table (whose rows code computes,
// without end or over a file's own shadow tables), or when the file is not
// a database.
std::map<std::string, bool> SqliteTableColumns(const std::string& path,
                                               sqlite3* database,
                                               const std::string& table);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_SQLITE_FILE_H_
