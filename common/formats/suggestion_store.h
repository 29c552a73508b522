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

// The most bytes a text or a suggestion may have, in the store and in a
// file the trainer reads: a sentence or an interface string, not a
// document (training leaves out pairs of more than 255 tokens anyway).
inline constexpr std::size_t kMaxSuggestionBytes = 64 << 10;

// A suggestions file open for adding, in SQLite's write-ahead-log mode, so
// that fanyi-train reading it neither waits for the server nor holds it
// up. Thread-safe.
class SuggestionStore {
 public:
  // Opens `path`, creating the file and its table when missing; a
  // LibreTranslate file gains fanyi's columns. At most `max_rows`
  // suggestions are held, in a file of at most `max_bytes`. Throws
  // std::runtime_error naming the file when it cannot be opened or is not
  // a suggestions file.
  SuggestionStore(const std::string& path, int64_t max_rows, int64_t max_bytes);
  ~SuggestionStore();

  SuggestionStore(const SuggestionStore&) = delete;
  SuggestionStore& operator=(const SuggestionStore&) = delete;

  // What Add did.
  enum class Outcome {
    kAdded,     // Stored and committed.
    kTooLarge,  // A text or the suggestion is over kMaxSuggestionBytes.
    kFull,      // The file holds max_rows suggestions or max_bytes.
    kBusy       // Another program held the file's lock for too long.
  };

  // Adds `suggestion`, committed before it returns, unless the outcome
  // says why not. Throws std::runtime_error naming the file for any other
  // SQLite failure (an I/O error, a file deleted from under it).
  Outcome Add(const Suggestion& suggestion);

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
// it, in the order the rows were added, one row at a time: a file of any
// size is read in bounded memory. Only q, s, source and target are read.
// A file from elsewhere is checked first (SQLite's quick_check, linear in
// its size), and refused when its "suggestions" is not a plain table or
// gives its texts default values (which a small file could make huge).
class SuggestionReader {
 public:
  // Throws std::runtime_error naming the file when it is not a SQLite file
  // with a suggestions table of those columns.
  explicit SuggestionReader(const std::string& path);
  ~SuggestionReader();

  SuggestionReader(const SuggestionReader&) = delete;
  SuggestionReader& operator=(const SuggestionReader&) = delete;

  // The next row into `*suggestion` (text, suggestion and languages; a
  // NULL column reads as empty), and its rowid into `*row`; false after
  // the last, for good. Throws std::runtime_error naming the file and row
  // on a corrupt file or a value over kMaxSuggestionBytes.
  bool Next(Suggestion* suggestion, int64_t* row);

 private:
  const std::string path_;
  sqlite3* database_ = nullptr;
  sqlite3_stmt* select_ = nullptr;
  bool done_ = false;  // The last row was read, or reading failed.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_SUGGESTION_STORE_H_
