#ifndef FANYI_COMMON_PIPELINE_DOCUMENT_FILE_H_
#define FANYI_COMMON_PIPELINE_DOCUMENT_FILE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/formats/po_document.h"
#include "common/formats/zip_package.h"
#include "common/pipeline/text_translation.h"

namespace fanyi {

// A file to translate, read by its name's extension: .txt (plain text),
// .html or .htm, .srt, .md or .markdown, .docx, .pptx, .odt, .odp, .epub,
// .pdf, and gettext's .po. Gives the texts the pipeline translates in the
// file's format (the file itself, a package's text parts, a .pdf's text as
// a .docx's document, a .po file's untranslated messages as plain text)
// and writes their translations back as the translated file: the same
// format, but a .docx for a .pdf (a PDF's text cannot be put back in its
// place). Thread-safe once built (const).
class DocumentFile {
 public:
  // The extensions read, as LibreTranslate lists them.
  static const std::vector<std::string>& Extensions();

  // How a .pdf becomes the .docx of its paragraphs: PdfText's
  // WordDocument, here or in a process of its own (a server's PdfReader).
  using PdfToWord = std::function<std::string(const std::string& pdf)>;

  // Reads `content`, named `filename`; a .pdf with `pdf_to_word` (empty:
  // PdfText in this process). Throws std::invalid_argument for an
  // unsupported extension, an empty file, a package that is no such
  // package, a .pdf that is refused, or a .po file PoDocument refuses.
  DocumentFile(const std::string& filename, std::string content,
               const PdfToWord& pdf_to_word = {});

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
  // before its extension ("notes.zh-Hans.md"; "report.zh.docx" for
  // "report.pdf").
  std::string TranslatedName(const std::string& target_code) const;
  // Its media type, for a download.
  std::string ContentType() const;

 private:
  std::string filename_;
  std::string extension_;  // Lowercase, with its dot.
  TextFormat format_ = TextFormat::kText;
  std::vector<std::string> texts_;     // Unless a package.
  std::optional<ZipPackage> package_;  // A package, or a .pdf's .docx.
  std::optional<PoDocument> po_;       // A .po file.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_DOCUMENT_FILE_H_
