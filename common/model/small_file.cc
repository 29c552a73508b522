#include "common/model/small_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace fanyi {

std::string ReadSmallFile(const std::string& path, int64_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    throw std::runtime_error(path + ": not a regular file");
  }
  if (status.st_size > limit) {
    throw std::runtime_error(path + ": " + std::to_string(status.st_size) +
                             " bytes, over the " + std::to_string(limit) +
                             " this reader takes");
  }
  std::string bytes(static_cast<size_t>(status.st_size) + 1, '\0');
  size_t size = 0;
  while (size < bytes.size()) {
    const ssize_t got = ::read(fd, bytes.data() + size, bytes.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      throw std::runtime_error(path + ": read failed: " + std::strerror(errno));
    }
    if (got == 0) break;
    size += static_cast<size_t>(got);
  }
  if (size > static_cast<size_t>(status.st_size)) {
    throw std::runtime_error(path + ": grew while being read");
  }
  bytes.resize(size);
  return bytes;
}

std::shared_ptr<const SubwordModel> ReadSubwordModelFile(
    const std::string& path) {
  std::string bytes = ReadSmallFile(path, int64_t{64} << 20);
  try {
    return std::make_shared<const SubwordModel>(
        SubwordModel::FromSerialized(std::move(bytes)));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace fanyi
