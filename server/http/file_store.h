#ifndef FANYI_SERVER_HTTP_FILE_STORE_H_
#define FANYI_SERVER_HTTP_FILE_STORE_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace fanyi {

// A translated file waiting for its download.
struct StoredFile {
  std::string filename;      // What the client saves it as.
  std::string content_type;  // Its media type.
  std::string content;
};

// The translated files of /translate_file until /download_file takes them:
// in memory, under names no client can guess, each removed when downloaded
// or after a time to live, within a bound on the bytes held. Thread-safe.
class FileStore {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `max_bytes`: what all the files held may take. `clock` (tests)
  // defaults to steady_clock.
  FileStore(std::chrono::seconds time_to_live, std::size_t max_bytes,
            Clock clock = nullptr);

  // Holds `file` and returns the name it is downloaded by (random hex, a
  // dot and the file's name made safe for a URL). Returns nullopt, holding
  // nothing, when the store has no room for it.
  std::optional<std::string> Put(StoredFile file);

  // Removes and returns the file of `name`; nullopt when there is none
  // (never stored, downloaded already, or expired).
  std::optional<StoredFile> Take(const std::string& name);

  std::chrono::seconds time_to_live() const { return time_to_live_; }

 private:
  struct Entry {
    StoredFile file;
    std::chrono::steady_clock::time_point expires;
  };

  // Drops the expired files. Needs mutex_.
  void DropExpired(std::chrono::steady_clock::time_point now);

  const std::chrono::seconds time_to_live_;
  const std::size_t max_bytes_;
  const Clock clock_;
  std::mutex mutex_;
  std::map<std::string, Entry> files_;  // Guarded by mutex_.
  std::size_t bytes_ = 0;               // Guarded by mutex_: held in files_.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_FILE_STORE_H_
