#include "server/http/file_store.h"

#include <cctype>
#include <random>
#include <utility>

namespace fanyi {
namespace {

// 128 random bits as hex: a name no other client can guess.
std::string RandomHex() {
  static thread_local std::mt19937_64 generator(std::random_device{}());
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (int word = 0; word < 2; ++word) {
    std::uint64_t bits = generator();
    for (int i = 0; i < 16; ++i, bits >>= 4) hex.push_back(kDigits[bits & 15]);
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
                     Clock clock)
    : time_to_live_(time_to_live),
      max_bytes_(max_bytes),
      clock_(clock ? std::move(clock)
                   : [] { return std::chrono::steady_clock::now(); }) {}

std::optional<std::string> FileStore::Put(StoredFile file) {
  const auto now = clock_();
  std::lock_guard<std::mutex> lock(mutex_);
  DropExpired(now);
  if (file.content.size() > max_bytes_ - bytes_) return std::nullopt;
  const std::string name = RandomHex() + "." + SafeName(file.filename);
  bytes_ += file.content.size();
  files_[name] = {std::move(file), now + time_to_live_};
  return name;
}

std::optional<StoredFile> FileStore::Take(const std::string& name) {
  const auto now = clock_();
  std::lock_guard<std::mutex> lock(mutex_);
  DropExpired(now);
  const auto found = files_.find(name);
  if (found == files_.end()) return std::nullopt;
  StoredFile file = std::move(found->second.file);
  bytes_ -= file.content.size();
  files_.erase(found);
  return file;
}

void FileStore::DropExpired(std::chrono::steady_clock::time_point now) {
  for (auto it = files_.begin(); it != files_.end();) {
    if (it->second.expires <= now) {
      bytes_ -= it->second.file.content.size();
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace fanyi
