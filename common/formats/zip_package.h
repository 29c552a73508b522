#ifndef FANYI_COMMON_FORMATS_ZIP_PACKAGE_H_
#define FANYI_COMMON_FORMATS_ZIP_PACKAGE_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace fanyi {

// The zip packages whose parts are translated.
enum class ZipKind {
  // .docx: the WordprocessingML parts (word/document.xml, the headers,
  // footers, footnotes and endnotes).
  kDocx,
  // .pptx: the slides and their notes (DrawingML), each
  // ppt/slides/slide<N>.xml and ppt/notesSlides/notesSlide<N>.xml.
  kPptx,
  // .odt and .odp (OpenDocument text and presentation): content.xml (the
  // body, or the slides and notes) and styles.xml (headers, footers).
  kOdt,
  kOdp,
  // .epub: the XHTML content documents (chapters, the navigation
  // document) and the NCX, each read as HTML (words translated, markup kept
  // byte for byte); its package document (metadata, spine) is kept as it
  // is.
  kEpub,
};

// A .docx, .pptx, .odt, .odp or .epub file: a zip package some of whose
// parts hold the text. Reads those parts, and writes the package again
// with them replaced and every other entry (styles, images, metadata, an
// uncompressed mimetype first) as it was. Read with libzip.
class ZipPackage {
 public:
  // Text parts larger than this, uncompressed, in all, are refused (a zip
  // bomb would otherwise expand in memory).
  static constexpr std::size_t kMaxTextBytes = 32 << 20;

  // Opens the package in `bytes`. Throws std::invalid_argument when it is
  // not a zip, is not of `kind` (a .docx without word/document.xml, a
  // .pptx without ppt/presentation.xml, an .odt, .odp or .epub whose
  // mimetype entry says another type), has no text parts (a .pptx without
  // slides), or its text parts are too large or cannot be read.
  ZipPackage(std::string bytes, ZipKind kind);

  // The text parts' names (a .docx's word/document.xml and an
  // OpenDocument's content.xml first, the rest in the zip's order) and their
  // XML. An empty part is none: it is kept as it is.
  const std::vector<std::string>& part_names() const { return names_; }
  const std::vector<std::string>& parts() const { return parts_; }

  // The package with part i replaced by `parts[i]`. Throws
  // std::invalid_argument when the count differs, std::runtime_error when
  // libzip fails.
  std::string Write(const std::vector<std::string>& parts) const;

 private:
  std::string bytes_;
  ZipKind kind_;
  std::vector<std::string> names_;
  std::vector<std::string> parts_;
  std::vector<long long> indices_;  // Each part's entry in the zip.
};

// A new zip archive of `entries` (name, content), in their order, each
// compressed. Throws std::runtime_error when libzip fails.
std::string WriteZip(
    const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_ZIP_PACKAGE_H_
