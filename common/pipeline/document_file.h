#ifndef FANYI_COMMON_PIPELINE_DOCUMENT_FILE_H_
#define FANYI_COMMON_PIPELINE_DOCUMENT_FILE_H_

#include <optional>
#include <string>
#include <vector>

#include "common/formats/po_document.h"
#include "common/formats/zip_package.h"
#include "common/pipeline/text_translation.h"

namespace fanyi {

// A file to translate, read by its name's extension: .txt (plain text),
// .html or .htm, .srt, .md or .markdown, .docx, .epub, and gettext's .po.
// Gives the texts the pipeline translates in the file's format (the file
// itself, a .docx's text parts, an .epub's XHTML documents, a .po file's
// untranslated messages as plain text) and writes their translations back
// as the translated file. Thread-safe
// once built (const).
class DocumentFile {
 public:
  // The extensions read, as LibreTranslate lists them.
  static const std::vector<std::string>& Extensions();

  // Reads `content`, named `filename`. Throws std::invalid_argument for an
  // unsupported extension, an empty file, a .docx or .epub that is no such
  // package, or a .po file PoDocument refuses.
  DocumentFile(const std::string& filename, std::string content);

  // The format its texts are in.
  TextFormat format() const { return format_; }
  // What to translate: the file, the package's text parts, or the .po
  // file's untranslated messages.
  const std::vector<std::string>& texts() const;

  // The language a .po file's header says it translates into, or "".
  std::string language() const;

  // The translated file, from one translation per text. Throws
  // std::invalid_argument when the count differs.
  std::string Write(const std::vector<std::string>& translations) const;

  // What the translated file is called: the name with the target language
  // before its extension ("notes.zh-Hans.md").
  std::string TranslatedName(const std::string& target_code) const;
  // Its media type, for a download.
  std::string ContentType() const;

 private:
  std::string filename_;
  std::string extension_;  // Lowercase, with its dot.
  TextFormat format_ = TextFormat::kText;
  std::vector<std::string> texts_;     // Unless a package.
  std::optional<ZipPackage> package_;  // A .docx or .epub.
  std::optional<PoDocument> po_;       // A .po file.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_DOCUMENT_FILE_H_
