#include "common/pipeline/document_file.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

namespace fanyi {
namespace {

struct FileKind {
  const char* extension;
  TextFormat format;
  const char* content_type;
};

constexpr FileKind kKinds[] = {
    {".txt", TextFormat::kText, "text/plain; charset=utf-8"},
    {".html", TextFormat::kHtml, "text/html; charset=utf-8"},
    {".htm", TextFormat::kHtml, "text/html; charset=utf-8"},
    {".srt", TextFormat::kSrt, "application/x-subrip; charset=utf-8"},
    {".md", TextFormat::kMarkdown, "text/markdown; charset=utf-8"},
    {".markdown", TextFormat::kMarkdown, "text/markdown; charset=utf-8"},
    {".docx", TextFormat::kWordXml,
     "application/vnd.openxmlformats-officedocument.wordprocessingml."
     "document"},
    {".epub", TextFormat::kHtml, "application/epub+zip"},
    {".po", TextFormat::kText, "text/x-gettext-translation; charset=utf-8"}};

std::string ExtensionOf(const std::string& filename) {
  const std::size_t dot = filename.rfind('.');
  if (dot == std::string::npos || dot == 0 ||
      filename.find('/', dot) != std::string::npos) {
    return "";
  }
  std::string extension = filename.substr(dot);
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return extension;
}

}  // namespace

const std::vector<std::string>& DocumentFile::Extensions() {
  static const std::vector<std::string> kExtensions = [] {
    std::vector<std::string> extensions;
    for (const FileKind& kind : kKinds) extensions.push_back(kind.extension);
    return extensions;
  }();
  return kExtensions;
}

DocumentFile::DocumentFile(const std::string& filename, std::string content)
    : filename_(filename), extension_(ExtensionOf(filename)) {
  const FileKind* kind = nullptr;
  for (const FileKind& each : kKinds) {
    if (extension_ == each.extension) kind = &each;
  }
  if (kind == nullptr) {
    std::string listed;
    for (const std::string& extension : Extensions()) {
      listed += (listed.empty() ? "" : ", ") + extension;
    }
    throw std::invalid_argument((extension_.empty()
                                     ? "files without an extension"
                                     : "files of type " + extension_) +
                                " are not supported; send " + listed);
  }
  if (content.empty()) throw std::invalid_argument(filename + " is empty");
  format_ = kind->format;
  if (extension_ == ".docx" || extension_ == ".epub") {
    package_.emplace(std::move(content),
                     extension_ == ".docx" ? ZipKind::kDocx : ZipKind::kEpub);
  } else if (extension_ == ".po") {
    po_.emplace(std::move(content));
  } else {
    texts_.push_back(std::move(content));
  }
}

const std::vector<std::string>& DocumentFile::texts() const {
  if (po_) return po_->texts();
  return package_ ? package_->parts() : texts_;
}

std::string DocumentFile::language() const {
  return po_ ? po_->language() : "";
}

std::string DocumentFile::Write(
    const std::vector<std::string>& translations) const {
  if (translations.size() != texts().size()) {
    throw std::invalid_argument(
        "DocumentFile::Write: " + std::to_string(translations.size()) +
        " translations for " + std::to_string(texts().size()) + " texts");
  }
  if (po_) return po_->Write(translations);
  return package_ ? package_->Write(translations) : translations.front();
}

std::string DocumentFile::TranslatedName(const std::string& target_code) const {
  const std::size_t stem = filename_.size() - extension_.size();
  return filename_.substr(0, stem) + "." + target_code + filename_.substr(stem);
}

std::string DocumentFile::ContentType() const {
  for (const FileKind& kind : kKinds) {
    if (extension_ == kind.extension) return kind.content_type;
  }
  return "application/octet-stream";
}

}  // namespace fanyi
