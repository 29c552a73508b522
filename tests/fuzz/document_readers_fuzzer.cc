// libFuzzer target: the file formats' readers (ReadSrt, ReadMarkdown,
// ReadWordXml, and ZipPackage around it and ReadHtml) and
// MarkedDocument::Render, on arbitrary documents. The first byte picks the
// reader ('s', 'm', 'z' for a .docx package whose text parts are read as
// Word parts, 'e' for an .epub whose parts are read as HTML, else Word);
// the rest is the document. Properties:
//   - reading throws nothing but std::invalid_argument (a refusal), and
//     rendering nothing at all;
//   - SubRip and Markdown, with every text upper-cased and its markers
//     reversed, come back with the same characters, letter case, spacing
//     and order aside: nothing is lost or doubled;
//   - a Word part so rendered is still well-formed XML.
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
#include "common/formats/srt_reader.h"
#include "common/formats/word_reader.h"
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
  if (format == 'z' || format == 'e') {
    try {
      const fanyi::ZipPackage package(source, format == 'z'
                                                  ? fanyi::ZipKind::kDocx
                                                  : fanyi::ZipKind::kEpub);
      for (const std::string& part : package.parts()) {
        if (format == 'z') {
          fanyi::ReadWordXml(part);
        } else {
          fanyi::ReadHtml(part);
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
                               : fanyi::ReadWordXml(source);
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
