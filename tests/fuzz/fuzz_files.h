// Scratch files for fuzz targets whose code under test reads from disk.
#ifndef FANYI_TESTS_FUZZ_FUZZ_FILES_H_
#define FANYI_TESTS_FUZZ_FUZZ_FILES_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace fanyi::fuzzing {

// A fresh directory under $TMPDIR (or /tmp) for this fuzzing process; aborts
// if it cannot be made. Left behind on exit (libFuzzer exits from anywhere).
std::string MakeScratchDirectory(const std::string& prefix);

// Replaces the contents of `path` with `size` bytes at `data`; aborts on
// failure, which would make every later result meaningless.
void WriteFileOrDie(const std::string& path, const uint8_t* data,
                    std::size_t size);

}  // namespace fanyi::fuzzing

#endif  // FANYI_TESTS_FUZZ_FUZZ_FILES_H_
