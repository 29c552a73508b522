// libFuzzer target: ReadHtml and MarkedDocument::Render, on arbitrary
// documents. Input: valid UTF-8 (other inputs are skipped: the pipeline
// refuses them before reading). Properties:
//   - reading refuses (std::invalid_argument) only a document nested past
//     the depth limit or one whose parse outgrows its memory or CPU bound, and
//     neither reading nor rendering crashes or throws anything else;
//   - rendered with its own texts, the document parses to the same
//     elements, nesting and attributes as before;
//   - with every text upper-cased and its markers reversed, to the same
//     elements at the same depths with the same attributes (their order
//     among siblings may change: the markers moved): every tag comes back
//     once.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/formats/html_reader.h"
#include "common/text/utf8.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/html_structure.h"
#include "tests/marked_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fanyi::fuzzing::FuzzCheck;
  const std::string html(reinterpret_cast<const char*>(data), size);
  try {
    fanyi::DecodeUtf8(html);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  std::optional<fanyi::MarkedDocument> read;
  try {
    read.emplace(fanyi::ReadHtml(html));
  } catch (const std::invalid_argument& e) {
    const std::string why = e.what();
    FuzzCheck(why.find("HTML nests elements") == 0 ||
                  why.find("HTML: parsing it would take more than") == 0 ||
                  why.find("HTML: parsing it took more than") == 0,
              "ReadHtml refused with an unexpected reason: " + why);
    return 0;
  }
  const fanyi::MarkedDocument& document = *read;
  const std::vector<std::string> structure =
      fanyi::testing_util::HtmlStructure(html);
  FuzzCheck(fanyi::testing_util::HtmlStructure(
                document.Render(document.texts())) == structure,
            "rendered with its own texts, the document parses differently");
  std::vector<std::string> moved =
      fanyi::testing_util::HtmlStructure(fanyi::testing_util::RenderRewritten(
          document, fanyi::testing_util::UpperCaseWithMarkersReversed));
  std::vector<std::string> sorted = structure;
  std::sort(moved.begin(), moved.end());
  std::sort(sorted.begin(), sorted.end());
  FuzzCheck(moved == sorted,
            "with its texts rewritten, the document has other elements");
  return 0;
}
