#include "tests/fuzz/fuzz_files.h"

#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <vector>

#include "tests/fuzz/fuzz_check.h"

namespace fanyi::fuzzing {

std::string MakeScratchDirectory(const std::string& prefix) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern = std::string(tmpdir != nullptr ? tmpdir : "/tmp") + "/" +
                        prefix + "-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  FuzzCheck(mkdtemp(buffer.data()) != nullptr,
            "cannot create a scratch directory from " + pattern);
  return buffer.data();
}

void WriteFileOrDie(const std::string& path, const uint8_t* data,
                    std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data),
            static_cast<std::streamsize>(size));
  out.close();
  FuzzCheck(static_cast<bool>(out), "cannot write " + path);
}

}  // namespace fanyi::fuzzing
