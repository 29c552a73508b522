#include "common/pipeline/document_file.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

#include "common/formats/pdf_text.h"

namespace fanyi {
namespace {

// How a file's texts are held.
enum class Holding {
  kWhole,    // The file is the text.
  kPackage,  // A zip package's parts (ZipPackage).
  kPdf,      // A .pdf's text, as a .docx (PdfText).
  kCatalog   // A .po file's untranslated messages (PoDocument).
};

struct FileKind {
  const char* extension;
  TextFormat format;
  Holding holding;
  ZipKind package;  // For kPackage.
  // What the translated file is: its extension (its own, unless given)
  // and media type.
  const char* written_extension;
  const char* content_type;
};

constexpr char kDocxType[] =
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

constexpr FileKind kKinds[] = {
    {".txt", TextFormat::kText, Holding::kWhole, ZipKind::kDocx, nullptr,
     "text/plain; charset=utf-8"},
    {".html", TextFormat::kHtml, Holding::kWhole, ZipKind::kDocx, nullptr,
     "text/html; charset=utf-8"},
    {".htm", TextFormat::kHtml, Holding::kWhole, ZipKind::kDocx, nullptr,
     "text/html; charset=utf-8"},
    {".srt", TextFormat::kSrt, Holding::kWhole, ZipKind::kDocx, nullptr,
     "application/x-subrip; charset=utf-8"},
    {".md", TextFormat::kMarkdown, Holding::kWhole, ZipKind::kDocx, nullptr,
     "text/markdown; charset=utf-8"},
    {".markdown", TextFormat::kMarkdown, Holding::kWhole, ZipKind::kDocx,
     nullptr, "text/markdown; charset=utf-8"},
    {".docx", TextFormat::kOfficeXml, Holding::kPackage, ZipKind::kDocx,
     nullptr, kDocxType},
    {".pptx", TextFormat::kOfficeXml, Holding::kPackage, ZipKind::kPptx,
     nullptr,
     "application/"
     "vnd.openxmlformats-officedocument.presentationml.presentation"},
    {".odt", TextFormat::kOfficeXml, Holding::kPackage, ZipKind::kOdt, nullptr,
     "application/vnd.oasis.opendocument.text"},
    {".odp", TextFormat::kOfficeXml, Holding::kPackage, ZipKind::kOdp, nullptr,
     "application/vnd.oasis.opendocument.presentation"},
    {".epub", TextFormat::kHtml, Holding::kPackage, ZipKind::kEpub, nullptr,
     "application/epub+zip"},
    {".pdf", TextFormat::kOfficeXml, Holding::kPdf, ZipKind::kDocx, ".docx",
     kDocxType},
    {".po", TextFormat::kText, Holding::kCatalog, ZipKind::kDocx, nullptr,
     "text/x-gettext-translation; charset=utf-8"}};

const FileKind* KindOf(const std::string& extension) {
  for (const FileKind& kind : kKinds) {
    if (extension == kind.extension) return &kind;
  }
  return nullptr;
}

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

DocumentFile::DocumentFile(const std::string& filename, std::string content,
                           const PdfToWord& pdf_to_word)
    : filename_(filename), extension_(ExtensionOf(filename)) {
  const FileKind* kind = KindOf(extension_);
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
  switch (kind->holding) {
    case Holding::kPackage:
      package_.emplace(std::move(content), kind->package);
      break;
    case Holding::kPdf:
      package_.emplace(
          pdf_to_word ? pdf_to_word(content) : PdfText(content).WordDocument(),
          ZipKind::kDocx);
      break;
    case Holding::kCatalog:
      po_.emplace(std::move(content));
      break;
    case Holding::kWhole:
      texts_.push_back(std::move(content));
      break;
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
  const char* written = KindOf(extension_)->written_extension;
  return filename_.substr(0, stem) + "." + target_code +
         (written != nullptr ? written : filename_.substr(stem));
}

std::string DocumentFile::ContentType() const {
  return KindOf(extension_)->content_type;
}

}  // namespace fanyi
