#ifndef FANYI_COMMON_FORMATS_DOCX_PACKAGE_H_
#define FANYI_COMMON_FORMATS_DOCX_PACKAGE_H_

#include <cstddef>
#include <string>
#include <vector>

namespace fanyi {

// A .docx file: a zip package whose WordprocessingML parts hold the text
// (word/document.xml, the headers, footers, footnotes and endnotes). Reads
// those parts, and writes the package again with them replaced and every
// other entry (styles, images, relationships) as it was. Read with libzip.
class DocxPackage {
 public:
  // Text parts larger than this, uncompressed, in all, are refused (a zip
  // bomb would otherwise expand in memory).
  static constexpr std::size_t kMaxTextBytes = 32 << 20;

  // Opens the package in `bytes`. Throws std::invalid_argument when it is
  // not a zip, has no word/document.xml, or its text parts are too large
  // or cannot be read.
  explicit DocxPackage(std::string bytes);

  // The text parts' names, word/document.xml first, and their XML.
  const std::vector<std::string>& part_names() const { return names_; }
  const std::vector<std::string>& parts() const { return parts_; }

  // The package with part i replaced by `parts[i]`. Throws
  // std::invalid_argument when the count differs, std::runtime_error when
  // libzip fails.
  std::string Write(const std::vector<std::string>& parts) const;

 private:
  std::string bytes_;
  std::vector<std::string> names_;
  std::vector<std::string> parts_;
  std::vector<long long> indices_;  // Each part's entry in the zip.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_DOCX_PACKAGE_H_
