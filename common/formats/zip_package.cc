#include "common/formats/zip_package.h"

#include <zip.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace fanyi {
namespace {

using Archive = std::unique_ptr<zip_t, void (*)(zip_t*)>;

// Opens `bytes` as a zip archive on a buffer source; `*source` stays alive
// after the archive closes (libzip writes the new archive into it). For
// writing (`flags` without ZIP_RDONLY) the source owns a malloc'd copy:
// libzip keeps the unchanged start of the archive by sharing the old
// buffer's memory with the new one, and the new one frees it later, which
// must not be memory libzip was only lent.
Archive OpenArchive(const std::string& bytes, int flags,
                    std::string_view extension, zip_source_t** source) {
  zip_error_t error;
  zip_error_init(&error);
  const bool writing = (flags & ZIP_RDONLY) == 0;
  void* data = const_cast<char*>(bytes.data());
  if (writing) {
    data = std::malloc(bytes.empty() ? 1 : bytes.size());
    if (data == nullptr) throw std::bad_alloc();
    std::memcpy(data, bytes.data(), bytes.size());
  }
  *source =
      zip_source_buffer_create(data, bytes.size(), writing ? 1 : 0, &error);
  if (*source == nullptr) {
    if (writing) std::free(data);
    zip_error_fini(&error);
    throw std::runtime_error("libzip: cannot make a buffer source");
  }
  zip_t* archive = zip_open_from_source(*source, flags, &error);
  if (archive == nullptr) {
    const std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    zip_source_free(*source);
    throw std::invalid_argument("the file is not a " + std::string(extension) +
                                " (zip) package: " + message);
  }
  zip_error_fini(&error);
  zip_source_keep(*source);
  return Archive(archive, zip_discard);
}

// What libzip wrote into buffer source `source` when its archive closed.
std::string WrittenBytes(zip_source_t* source) {
  if (zip_source_open(source) != 0) {
    throw std::runtime_error("libzip: cannot read the written archive");
  }
  zip_source_seek(source, 0, SEEK_END);
  const zip_int64_t size = zip_source_tell(source);
  zip_source_seek(source, 0, SEEK_SET);
  std::string written(size > 0 ? static_cast<std::size_t>(size) : 0, '\0');
  const zip_int64_t read =
      zip_source_read(source, written.data(), written.size());
  zip_source_close(source);
  if (size <= 0 || read != size) {
    throw std::runtime_error("libzip: cannot read the written archive");
  }
  return written;
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

// True when `name` is `prefix`, digits (or none) and `suffix`.
bool IsNumbered(std::string_view name, std::string_view prefix,
                std::string_view suffix) {
  if (name.size() < prefix.size() + suffix.size() ||
      name.substr(0, prefix.size()) != prefix ||
      name.substr(name.size() - suffix.size()) != suffix) {
    return false;
  }
  return name.substr(prefix.size(), name.size() - prefix.size() - suffix.size())
             .find_first_not_of("0123456789") == std::string_view::npos;
}

// True for a .docx's parts whose text is translated: word/document.xml,
// word/header<N>.xml, word/footer<N>.xml (N: digits, or none),
// word/footnotes.xml and word/endnotes.xml.
bool IsWordTextPart(std::string_view name) {
  return name == "word/document.xml" || name == "word/footnotes.xml" ||
         name == "word/endnotes.xml" ||
         IsNumbered(name, "word/header", ".xml") ||
         IsNumbered(name, "word/footer", ".xml");
}

// True for a .pptx's slides and notes.
bool IsSlideTextPart(std::string_view name) {
  return IsNumbered(name, "ppt/slides/slide", ".xml") ||
         IsNumbered(name, "ppt/notesSlides/notesSlide", ".xml");
}

// True for an OpenDocument's content and styles (headers, footers).
bool IsOpenDocumentTextPart(std::string_view name) {
  return name == "content.xml" || name == "styles.xml";
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

// What makes a package one of its kind, and which of its parts are text.
struct PackageRules {
  std::string_view extension;
  // What its mimetype entry must say; empty: none is read. An OpenDocument
  // may lack the entry, an EPUB must have it.
  std::string_view media_type;
  bool media_type_required = false;
  // An entry it must have: its main part, first of the text parts when it
  // is one.
  std::string_view main_part;
  std::string_view text_parts;  // What they are, for a message.
  bool (*is_text_part)(std::string_view name);
};

const PackageRules& RulesOf(ZipKind kind) {
  static const PackageRules kDocx{
      ".docx", "", false, "word/document.xml", "document", IsWordTextPart};
  static const PackageRules kPptx{
      ".pptx", "", false, "ppt/presentation.xml", "slides", IsSlideTextPart};
  static const PackageRules kOdt{
      ".odt",    "application/vnd.oasis.opendocument.text",
      false,     "content.xml",
      "content", IsOpenDocumentTextPart};
  static const PackageRules kOdp{
      ".odp",    "application/vnd.oasis.opendocument.presentation",
      false,     "content.xml",
      "content", IsOpenDocumentTextPart};
  static const PackageRules kEpub{
      ".epub", "application/epub+zip",    true,
      "",      "XHTML content documents", IsEpubTextPart};
  switch (kind) {
    case ZipKind::kDocx:
      return kDocx;
    case ZipKind::kPptx:
      return kPptx;
    case ZipKind::kOdt:
      return kOdt;
    case ZipKind::kOdp:
      return kOdp;
    case ZipKind::kEpub:
      break;
  }
  return kEpub;
}

// Throws unless the archive's mimetype entry says what `rules` ask.
void CheckMediaType(zip_t* archive, const PackageRules& rules) {
  if (rules.media_type.empty()) return;
  const zip_int64_t entry = zip_name_locate(archive, "mimetype", 0);
  if (entry < 0 && !rules.media_type_required) return;
  std::string media_type;
  if (entry >= 0) {
    std::size_t room = ZipPackage::kMaxTextBytes - 128;  // 128 bytes read.
    try {
      media_type = ReadEntry(archive, static_cast<zip_uint64_t>(entry),
                             "mimetype", &room);
    } catch (const std::invalid_argument&) {
      media_type.clear();
    }
  }
  if (media_type != rules.media_type) {
    throw std::invalid_argument(
        "the file is a zip package whose mimetype is "
        "not " +
        std::string(rules.media_type) + ", so it is no " +
        std::string(rules.extension));
  }
}

}  // namespace

ZipPackage::ZipPackage(std::string bytes, ZipKind kind)
    : bytes_(std::move(bytes)), kind_(kind) {
  const PackageRules& rules = RulesOf(kind);
  zip_source_t* source = nullptr;
  Archive archive = OpenArchive(bytes_, ZIP_RDONLY, rules.extension, &source);
  std::unique_ptr<zip_source_t, void (*)(zip_source_t*)> owned(source,
                                                               zip_source_free);
  CheckMediaType(archive.get(), rules);
  if (!rules.main_part.empty() &&
      zip_name_locate(archive.get(), std::string(rules.main_part).c_str(), 0) <
          0) {
    throw std::invalid_argument(
        "the file is a zip package without " + std::string(rules.main_part) +
        ", so it is no " + std::string(rules.extension));
  }
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  std::size_t total = 0;
  for (zip_int64_t i = 0; i < entries; ++i) {
    const char* name = zip_get_name(archive.get(), i, 0);
    if (name == nullptr || !rules.is_text_part(name)) continue;
    std::string part = ReadEntry(archive.get(), i, name, &total);
    if (part.empty()) continue;  // Nothing to translate: kept as it is.
    const bool main = rules.main_part == name;  // First.
    names_.insert(main ? names_.begin() : names_.end(), name);
    parts_.insert(main ? parts_.begin() : parts_.end(), std::move(part));
    indices_.insert(main ? indices_.begin() : indices_.end(), i);
  }
  if (names_.empty()) {
    throw std::invalid_argument("the " + std::string(rules.extension) +
                                " holds no " + std::string(rules.text_parts) +
                                " to translate");
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
  Archive archive = OpenArchive(bytes_, 0, RulesOf(kind_).extension, &source);
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
  return WrittenBytes(source);
}

std::string WriteZip(
    const std::vector<std::pair<std::string, std::string>>& entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_t* opened = source == nullptr
                      ? nullptr
                      : zip_open_from_source(source, ZIP_TRUNCATE, &error);
  zip_error_fini(&error);
  if (opened == nullptr) {
    if (source != nullptr) zip_source_free(source);
    throw std::runtime_error("libzip: cannot make a zip archive");
  }
  zip_source_keep(source);
  Archive archive(opened, zip_discard);
  std::unique_ptr<zip_source_t, void (*)(zip_source_t*)> owned(source,
                                                               zip_source_free);
  for (const auto& [name, content] : entries) {
    zip_source_t* entry =
        zip_source_buffer(archive.get(), content.data(), content.size(), 0);
    if (entry == nullptr || zip_file_add(archive.get(), name.c_str(), entry,
                                         ZIP_FL_ENC_UTF_8) < 0) {
      if (entry != nullptr) zip_source_free(entry);
      throw std::runtime_error("libzip: cannot add " + name);
    }
  }
  if (zip_close(archive.get()) != 0) {
    throw std::runtime_error(std::string("libzip: cannot write the archive: ") +
                             zip_strerror(archive.get()));
  }
  archive.release();  // Closed: freed by zip_close.
  return WrittenBytes(source);
}

}  // namespace fanyi
