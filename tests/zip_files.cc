#include "tests/zip_files.h"

#include <zip.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

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
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  zip_error_fini(&error);
  if (archive == nullptr) throw std::runtime_error("libzip: cannot make a zip");
  zip_source_keep(buffer);
  for (const auto& [name, content] : entries) {
    zip_source_t* source =
        zip_source_buffer(archive, content.data(), content.size(), 0);
    if (zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8) < 0) {
      zip_source_free(source);
      throw std::runtime_error("libzip: cannot add " + name);
    }
  }
  if (zip_close(archive) != 0) throw std::runtime_error("libzip: close");
  zip_source_open(buffer);
  zip_source_seek(buffer, 0, SEEK_END);
  std::string bytes(static_cast<std::size_t>(zip_source_tell(buffer)), '\0');
  zip_source_seek(buffer, 0, SEEK_SET);
  zip_source_read(buffer, bytes.data(), bytes.size());
  zip_source_close(buffer);
  zip_source_free(buffer);
  return bytes;
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
