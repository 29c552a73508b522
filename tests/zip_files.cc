#include "tests/zip_files.h"

#include <zip.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "common/formats/zip_package.h"

namespace fanyi::testing_util {
namespace {

using Archive = std::unique_ptr<zip_t, void (*)(zip_t*)>;

Archive OpenZip(const std::string& zip) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source =
      zip_source_buffer_create(zip.data(), zip.size(), 0, &error);
  zip_t* archive = source == nullptr
                       ? nullptr
                       : zip_open_from_source(source, ZIP_RDONLY, &error);
  zip_error_fini(&error);
  if (archive == nullptr) {
    if (source != nullptr) zip_source_free(source);
    throw std::runtime_error("not a zip archive");
  }
  return Archive(archive, zip_discard);
}

}  // namespace

std::string ZipOf(
    const std::vector<std::pair<std::string, std::string>>& entries) {
  return WriteZip(entries);
}

std::string ZipEntry(const std::string& zip, const std::string& name) {
  const Archive archive = OpenZip(zip);
  zip_stat_t stat;
  if (zip_stat(archive.get(), name.c_str(), 0, &stat) != 0) {
    throw std::runtime_error("no entry " + name);
  }
  std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(
      zip_fopen(archive.get(), name.c_str(), 0), zip_fclose);
  std::string content(static_cast<std::size_t>(stat.size), '\0');
  if (file == nullptr ||
      zip_fread(file.get(), content.data(), content.size()) !=
          static_cast<zip_int64_t>(content.size())) {
    throw std::runtime_error("cannot read " + name);
  }
  return content;
}

long long ZipEntryCount(const std::string& zip) {
  return zip_get_num_entries(OpenZip(zip).get(), 0);
}

}  // namespace fanyi::testing_util
