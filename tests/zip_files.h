#ifndef FANYI_TESTS_ZIP_FILES_H_
#define FANYI_TESTS_ZIP_FILES_H_

#include <string>
#include <utility>
#include <vector>

namespace fanyi::testing_util {

// A zip archive of `entries` (name, content), as Word writes a .docx.
std::string ZipOf(
    const std::vector<std::pair<std::string, std::string>>& entries);

// The content of entry `name` of the zip archive `zip`. Throws
// std::runtime_error when it is no zip or has no such entry.
std::string ZipEntry(const std::string& zip, const std::string& name);

// How many entries the zip archive `zip` has.
long long ZipEntryCount(const std::string& zip);

}  // namespace fanyi::testing_util

#endif  // FANYI_TESTS_ZIP_FILES_H_
