#include "server/http/file_store.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace fanyi {
namespace {

// 128 bits of OpenSSL's cryptographic generator as hex: a name no other
// client can guess, even from the names it was given.
std::string RandomHex() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    throw std::runtime_error("OpenSSL's random generator failed");
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : bytes) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 15]);
  }
  return hex;
}

// `filename` with anything but letters, digits, '.', '-' and '_' made '_'
// and no leading dot, so that it is one safe path segment.
std::string SafeName(const std::string& filename) {
  std::string safe;
  for (char c : filename.substr(0, 100)) {
    const bool kept = std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                      c == '-' || c == '_';
    safe.push_back(kept ? c : '_');
  }
  while (!safe.empty() && safe.front() == '.') safe.erase(0, 1);
  return safe.empty() ? "file" : safe;
}

}  // namespace

FileStore::FileStore(std::chrono::seconds time_to_live, std::size_t max_bytes,
                     std::size_t max_client_bytes, Clock clock)
    : time_to_live_(time_to_live),
      max_bytes_(max_bytes),
      max_client_bytes_(max_client_bytes),
      clock_(clock ? std::move(clock)
                   : [] { return std::chrono::steady_clock::now(); }) {}

std::optional<std::string> FileStore::Put(StoredFile file,
                                          const std::string& client,
                                          Refusal* refusal) {
  const auto now = clock_();
  const std::string name = RandomHex() + "." + SafeName(file.filename);
  const std::size_t size = file.content.size();
  std::lock_guard<std::mutex> lock(mutex_);
  DropExpired(now);
  const auto held = client_bytes_.find(client);
  const std::size_t client_held =
      held == client_bytes_.end() ? 0 : held->second;
  const Refusal why =
      size > max_client_bytes_ - std::min(client_held, max_client_bytes_)
          ? Refusal::kClientShare
      : size > max_bytes_ - bytes_ ? Refusal::kFull
                                   : Refusal::kNone;
  if (refusal != nullptr) *refusal = why;
  if (why != Refusal::kNone) return std::nullopt;
  bytes_ += size;
  if (size > 0) client_bytes_[client] += size;
  files_[name] = {std::move(file), client, size, now + time_to_live_};
  return name;
}

std::optional<StoredFile> FileStore::Take(const std::string& name) {
  const auto now = clock_();
  std::lock_guard<std::mutex> lock(mutex_);
  DropExpired(now);
  const auto found = files_.find(name);
  if (found == files_.end()) return std::nullopt;
  StoredFile file = std::move(found->second.file);
  found->second.file.content.clear();
  Remove(found);
  return file;
}

void FileStore::Remove(std::map<std::string, Entry>::iterator it) {
  // Counted by what was put: Take has moved the content out already.
  const std::size_t size = it->second.put_bytes;
  bytes_ -= size;
  if (size > 0) {  // An empty file was never counted to its client.
    const auto client = client_bytes_.find(it->second.client);
    client->second -= size;
    if (client->second == 0) client_bytes_.erase(client);
  }
  files_.erase(it);
}

void FileStore::DropExpired(std::chrono::steady_clock::time_point now) {
  for (auto it = files_.begin(); it != files_.end();) {
    const auto next = std::next(it);
    if (it->second.expires <= now) Remove(it);
    it = next;
  }
}

}  // namespace fanyi
