// libFuzzer target: the file formats' readers (ReadSrt, ReadMarkdown,
// ReadOfficeXml, ZipPackage around it and ReadHtml, PdfText) and
// MarkedDocument::Render, on arbitrary documents. The first byte picks the
// reader ('s', 'm'; a package whose text parts are read: 'z' a .docx, 'p'
// a .pptx, 'o' an .odt, 'e' an .epub (as HTML); 'd' a .pdf, whose text is
// laid out as a .docx and read back; else an office XML part, Word's,
// DrawingML or OpenDocument); the rest is the document. Properties:
//   - reading throws nothing but std::invalid_argument (a refusal), and
//     rendering nothing at all;
//   - SubRip and Markdown, with every text upper-cased and its markers
//     reversed, come back with the same characters, letter case, spacing
//     and order aside: nothing is lost or doubled;
//   - an office XML part so rendered is still well-formed XML.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/formats/html_reader.h"
#include "common/formats/markdown_reader.h"
#include "common/formats/marked_document.h"
#include "common/formats/office_xml_reader.h"
#include "common/formats/pdf_text.h"
#include "common/formats/srt_reader.h"
#include "common/formats/xml_tree.h"
#include "common/formats/zip_package.h"
#include "common/text/utf8.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/marked_text.h"

namespace fanyi::fuzzing {
namespace {

// The bytes of `text` but ASCII whitespace, upper-cased, sorted.
std::string Characters(const std::string& text) {
  std::string kept;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      kept.push_back(
          static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

}  // namespace
}  // namespace fanyi::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fanyi::fuzzing::FuzzCheck;
  if (size == 0) return 0;
  const char format = static_cast<char>(data[0]);
  const std::string source(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string packages = "zpoed";
  if (packages.find(format) != std::string::npos) {
    try {
      const fanyi::ZipPackage package =
          format == 'd'
              ? fanyi::ZipPackage(fanyi::PdfText(source).WordDocument(),
                                  fanyi::ZipKind::kDocx)
              : fanyi::ZipPackage(source,
                                  format == 'z'   ? fanyi::ZipKind::kDocx
                                  : format == 'p' ? fanyi::ZipKind::kPptx
                                  : format == 'o' ? fanyi::ZipKind::kOdt
                                                  : fanyi::ZipKind::kEpub);
      for (const std::string& part : package.parts()) {
        if (format == 'e') {
          fanyi::ReadHtml(part);
        } else {
          fanyi::ReadOfficeXml(part);
        }
      }
    } catch (const std::invalid_argument&) {
    }
    return 0;
  }
  fanyi::MarkedDocument document("");
  try {
    document = format == 's'   ? fanyi::ReadSrt(source)
               : format == 'm' ? fanyi::ReadMarkdown(source)
                               : fanyi::ReadOfficeXml(source);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  const std::string rendered = fanyi::testing_util::RenderRewritten(
      document, fanyi::testing_util::UpperCaseWithMarkersReversed);
  if (format == 's' || format == 'm') {
    // The readers hand on a noncharacter of the source that would read as a
    // marker as U+FFFD.
    FuzzCheck(fanyi::fuzzing::Characters(rendered) ==
                  fanyi::fuzzing::Characters(
                      fanyi::EncodeUtf8(fanyi::DecodeWords(source))),
              "with its texts rewritten, the document has other characters");
  } else {
    try {
      fanyi::XmlTree tree(rendered);
    } catch (const std::invalid_argument& e) {
      FuzzCheck(false, std::string("the rendered part is no XML: ") + e.what());
    }
  }
  return 0;
}
