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
// or after a time to live, within a bound on the bytes held in all and a
// share of it per client, so that one client cannot fill it for the
// others. Thread-safe.
class FileStore {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // Why Put held nothing.
  enum class Refusal {
    kNone,
    kClientShare,  // The client's files would take more than its share.
    kFull          // All the files would take more than the bound.
  };

  // `max_bytes`: what all the files held may take; `max_client_bytes`:
  // what one client's may. `clock` (tests) defaults to steady_clock.
  FileStore(std::chrono::seconds time_to_live, std::size_t max_bytes,
            std::size_t max_client_bytes, Clock clock = nullptr);

  // Holds `file` for `client` (its API key or address) and returns the
  // name it is downloaded by (128 bits from OpenSSL's generator as hex, a
  // dot and the file's name made safe for a URL). Returns nullopt, holding
  // nothing, with `*refusal` (when given) saying why, when there is no
  // room for it.
  std::optional<std::string> Put(StoredFile file, const std::string& client,
                                 Refusal* refusal = nullptr);

  // Removes and returns the file of `name`; nullopt when there is none
  // (never stored, downloaded already, or expired).
  std::optional<StoredFile> Take(const std::string& name);

  std::chrono::seconds time_to_live() const { return time_to_live_; }

 private:
  struct Entry {
    StoredFile file;
    std::string client;
    std::size_t put_bytes = 0;  // The content's size when put.
    std::chrono::steady_clock::time_point expires;
  };

  // Drops the expired files. Needs mutex_.
  void DropExpired(std::chrono::steady_clock::time_point now);
  // Forgets the file at `it`. Needs mutex_.
  void Remove(std::map<std::string, Entry>::iterator it);

  const std::chrono::seconds time_to_live_;
  const std::size_t max_bytes_;
  const std::size_t max_client_bytes_;
  const Clock clock_;
  std::mutex mutex_;
  std::map<std::string, Entry> files_;  // Guarded by mutex_.
  std::size_t bytes_ = 0;               // Guarded by mutex_: held in files_.
  // Guarded by mutex_: each client's bytes in files_ (clients with none,
  // or only empty files, are not kept).
  std::map<std::string, std::size_t> client_bytes_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_FILE_STORE_H_
