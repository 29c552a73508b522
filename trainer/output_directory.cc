#include "trainer/output_directory.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace fanyi {

void CreateWritableDirectory(const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (!error && access(directory.c_str(), W_OK | X_OK) != 0) {
    error = std::error_code(errno, std::generic_category());
  }
  if (!error) return;
  const std::string user =
      std::to_string(getuid()) + ":" + std::to_string(getgid());
  throw std::runtime_error(
      "cannot write to " + directory + ": " + error.message() +
      " (this process runs as user " + user +
      "; make the directory, or the volume it is on, writable by that user, "
      "e.g. chown " +
      user + " on the host, or podman's :U volume option)");
}

}  // namespace fanyi
