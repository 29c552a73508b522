#include "common/formats/zip_package.h"

#include <zip.h>

#include <cctype>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace fanyi {
namespace {

using Archive = std::unique_ptr<zip_t, void (*)(zip_t*)>;

// Opens `bytes` as a zip archive on a buffer source; `*source` stays alive
// after the archive closes (libzip writes the new archive into it).
Archive OpenArchive(const std::string& bytes, int flags, ZipKind kind,
                    zip_source_t** source) {
  zip_error_t error;
  zip_error_init(&error);
  *source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (*source == nullptr) {
    zip_error_fini(&error);
    throw std::runtime_error("libzip: cannot make a buffer source");
  }
  zip_t* archive = zip_open_from_source(*source, flags, &error);
  if (archive == nullptr) {
    const std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    zip_source_free(*source);
    throw std::invalid_argument(std::string("the file is not a ") +
                                (kind == ZipKind::kDocx ? ".docx" : ".epub") +
                                " (zip) package: " + message);
  }
  zip_error_fini(&error);
  zip_source_keep(*source);
  return Archive(archive, zip_discard);
}

// The whole content of entry `index`, counted into `*total` bytes, which
// must stay within ZipPackage::kMaxTextBytes.
std::string ReadEntry(zip_t* archive, zip_uint64_t index,
                      const std::string& name, std::size_t* total) {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive, index, 0, &stat) != 0 ||
      (stat.valid & ZIP_STAT_SIZE) == 0) {
    throw std::invalid_argument(name + " cannot be read");
  }
  if (stat.size > ZipPackage::kMaxTextBytes - *total) {
    throw std::invalid_argument("the text parts are more than " +
                                std::to_string(ZipPackage::kMaxTextBytes) +
                                " bytes uncompressed, the limit (at " + name +
                                ")");
  }
  *total += static_cast<std::size_t>(stat.size);
  std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(
      zip_fopen_index(archive, index, 0), zip_fclose);
  if (file == nullptr) throw std::invalid_argument(name + " cannot be opened");
  std::string content(static_cast<std::size_t>(stat.size), '\0');
  std::size_t read = 0;
  while (read < content.size()) {
    const zip_int64_t got =
        zip_fread(file.get(), content.data() + read, content.size() - read);
    if (got <= 0) break;
    read += static_cast<std::size_t>(got);
  }
  if (read != content.size()) {
    throw std::invalid_argument(name + " is damaged (" + std::to_string(read) +
                                " of " + std::to_string(content.size()) +
                                " bytes read)");
  }
  return content;
}

// True for a .docx's parts whose text is translated: word/document.xml,
// word/header<N>.xml, word/footer<N>.xml (N: digits, or none),
// word/footnotes.xml and word/endnotes.xml. One pass over the name.
bool IsWordTextPart(std::string_view name) {
  constexpr std::string_view kFolder = "word/";
  constexpr std::string_view kExtension = ".xml";
  if (name.size() < kFolder.size() + kExtension.size() ||
      name.substr(0, kFolder.size()) != kFolder ||
      name.substr(name.size() - kExtension.size()) != kExtension) {
    return false;
  }
  std::string_view stem = name.substr(
      kFolder.size(), name.size() - kFolder.size() - kExtension.size());
  if (stem == "document" || stem == "footnotes" || stem == "endnotes") {
    return true;
  }
  for (std::string_view numbered : {"header", "footer"}) {
    if (stem.substr(0, numbered.size()) != numbered) continue;
    stem.remove_prefix(numbered.size());
    return stem.find_first_not_of("0123456789") == std::string_view::npos;
  }
  return false;
}

// True for an .epub's XHTML content documents and its NCX (the EPUB 2
// table of contents, whose labels are words like a navigation
// document's), by their extension (any letter case): .xhtml, .html, .htm,
// .ncx.
bool IsEpubTextPart(std::string_view name) {
  for (std::string_view extension : {".xhtml", ".html", ".htm", ".ncx"}) {
    if (name.size() <= extension.size()) continue;
    const std::string_view tail = name.substr(name.size() - extension.size());
    bool same = true;
    for (std::size_t i = 0; i < tail.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(tail[i])) == extension[i];
    }
    if (same) return true;
  }
  return false;
}

}  // namespace

ZipPackage::ZipPackage(std::string bytes, ZipKind kind)
    : bytes_(std::move(bytes)), kind_(kind) {
  zip_source_t* source = nullptr;
  Archive archive = OpenArchive(bytes_, ZIP_RDONLY, kind, &source);
  std::unique_ptr<zip_source_t, void (*)(zip_source_t*)> owned(source,
                                                               zip_source_free);
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  std::size_t total = 0;
  if (kind == ZipKind::kEpub) {
    // The EPUB container's first entry: its media type, as written.
    const zip_int64_t mimetype = zip_name_locate(archive.get(), "mimetype", 0);
    std::string media_type;
    if (mimetype >= 0) {
      std::size_t room = ZipPackage::kMaxTextBytes - 64;  // 64 bytes read.
      try {
        media_type =
            ReadEntry(archive.get(), static_cast<zip_uint64_t>(mimetype),
                      "mimetype", &room);
      } catch (const std::invalid_argument&) {
        media_type.clear();
      }
    }
    if (media_type != "application/epub+zip") {
      throw std::invalid_argument(
          "the file is a zip package whose mimetype is not "
          "application/epub+zip: not an .epub");
    }
  }
  for (zip_int64_t i = 0; i < entries; ++i) {
    const char* name = zip_get_name(archive.get(), i, 0);
    if (name == nullptr || !(kind == ZipKind::kDocx ? IsWordTextPart(name)
                                                    : IsEpubTextPart(name))) {
      continue;
    }
    std::string part = ReadEntry(archive.get(), i, name, &total);
    // A .docx's document itself first.
    const bool main = std::string(name) == "word/document.xml";
    names_.insert(main ? names_.begin() : names_.end(), name);
    parts_.insert(main ? parts_.begin() : parts_.end(), std::move(part));
    indices_.insert(main ? indices_.begin() : indices_.end(), i);
  }
  if (kind == ZipKind::kDocx &&
      (names_.empty() || names_.front() != "word/document.xml")) {
    throw std::invalid_argument(
        "the file is a zip package without word/document.xml: not a .docx");
  }
  if (kind == ZipKind::kEpub && names_.empty()) {
    throw std::invalid_argument(
        "the .epub holds no XHTML content documents to translate");
  }
}

std::string ZipPackage::Write(const std::vector<std::string>& parts) const {
  if (parts.size() != parts_.size()) {
    throw std::invalid_argument(
        "ZipPackage::Write: " + std::to_string(parts.size()) + " parts for " +
        std::to_string(parts_.size()));
  }
  // A copy to write into: libzip rewrites the buffer source on close.
  zip_source_t* source = nullptr;
  Archive archive = OpenArchive(bytes_, 0, kind_, &source);
  std::unique_ptr<zip_source_t, void (*)(zip_source_t*)> owned(source,
                                                               zip_source_free);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    zip_source_t* part =
        zip_source_buffer(archive.get(), parts[i].data(), parts[i].size(), 0);
    if (part == nullptr ||
        zip_file_replace(archive.get(), indices_[i], part, 0) != 0) {
      if (part != nullptr) zip_source_free(part);
      throw std::runtime_error("libzip: cannot replace " + names_[i] + ": " +
                               zip_strerror(archive.get()));
    }
  }
  if (zip_close(archive.get()) != 0) {
    throw std::runtime_error(std::string("libzip: cannot write the package: ") +
                             zip_strerror(archive.get()));
  }
  archive.release();  // Closed: freed by zip_close.
  if (zip_source_open(source) != 0) {
    throw std::runtime_error("libzip: cannot read the written package");
  }
  zip_source_seek(source, 0, SEEK_END);
  const zip_int64_t size = zip_source_tell(source);
  zip_source_seek(source, 0, SEEK_SET);
  std::string written(size > 0 ? static_cast<std::size_t>(size) : 0, '\0');
  const zip_int64_t read =
      zip_source_read(source, written.data(), written.size());
  zip_source_close(source);
  if (size <= 0 || read != size) {
    throw std::runtime_error("libzip: cannot read the written package");
  }
  return written;
}

}  // namespace fanyi
