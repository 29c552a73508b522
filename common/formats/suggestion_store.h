// Users' corrections of translations, as LibreTranslate's POST /suggest
// keeps them: a SQLite file whose table "suggestions" has LibreTranslate's
// columns (q, s, source, target), and fanyi's beside them (the model and
// version that translated, the API key, the time). The server adds to it;
// fanyi-train reads it (its own or LibreTranslate's) as training pairs.
#ifndef FANYI_COMMON_FORMATS_SUGGESTION_STORE_H_
#define FANYI_COMMON_FORMATS_SUGGESTION_STORE_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace fanyi {

// One suggestion.
struct Suggestion {
  std::string text;             // q: the text that was translated.
  std::string suggestion;       // s: the translation the user suggests.
  std::string source_language;  // The model's codes ("en", "zh"), as
  std::string target_language;  // LibreTranslate's: the client's codes.
  // The served model and version the suggestion corrects; empty and 0 in
  // LibreTranslate's files.
  std::string model;
  int64_t model_version = 0;
  std::string api_key;  // The request's key; empty: none, or not known.
  int64_t created = 0;  // Seconds since the Unix epoch; 0: not known.
};

// A text or suggestion longer than this is refused by the store and its
// reader alike (SQLite's own limit on a value, set lower).
inline constexpr int kMaxSuggestionBytes = 1 << 20;

// A suggestions file open for adding. Thread-safe.
class SuggestionStore {
 public:
  // Opens `path`, creating the file and its table when missing; a
  // LibreTranslate file gains fanyi's columns. At most `max_rows`
  // suggestions are held. Throws std::runtime_error naming the file when it
  // cannot be opened or is not a suggestions file.
  SuggestionStore(const std::string& path, int64_t max_rows);
  ~SuggestionStore();

  SuggestionStore(const SuggestionStore&) = delete;
  SuggestionStore& operator=(const SuggestionStore&) = delete;

  // Adds `suggestion`, committed before it returns; false (adding nothing)
  // when the file holds max_rows already. Throws std::runtime_error when
  // SQLite fails (a full disk, a file locked for longer than a few seconds).
  bool Add(const Suggestion& suggestion);

  // The suggestions held.
  int64_t size() const;

 private:
  const std::string path_;
  const int64_t max_rows_;
  mutable std::mutex mutex_;
  sqlite3* database_ = nullptr;     // Guarded by mutex_.
  sqlite3_stmt* insert_ = nullptr;  // Guarded by mutex_.
  int64_t rows_ = 0;                // Guarded by mutex_.
};

// Reads a suggestions file (fanyi's or LibreTranslate's) without changing
// it, oldest first, one row at a time: a file of any size is read in
// bounded memory. Only q, s, source and target are read.
class SuggestionReader {
 public:
  // Throws std::runtime_error naming the file when it is not a SQLite file
  // with a suggestions table of those columns.
  explicit SuggestionReader(const std::string& path);
  ~SuggestionReader();

  SuggestionReader(const SuggestionReader&) = delete;
  SuggestionReader& operator=(const SuggestionReader&) = delete;

  // The next row into `*suggestion` (text, suggestion and languages; a
  // NULL column reads as empty), and its row number from 1 into `*row`;
  // false after the last. Throws std::runtime_error naming the file on a
  // corrupt file or a value over kMaxSuggestionBytes. After the last row,
  // false for good.
  bool Next(Suggestion* suggestion, int64_t* row);

 private:
  const std::string path_;
  sqlite3* database_ = nullptr;
  sqlite3_stmt* select_ = nullptr;
  int64_t row_ = 0;
  bool done_ = false;  // The last row was read.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_SUGGESTION_STORE_H_
