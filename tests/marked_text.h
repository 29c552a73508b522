#ifndef FANYI_TESTS_MARKED_TEXT_H_
#define FANYI_TESTS_MARKED_TEXT_H_

#include <functional>
#include <string>
#include <vector>

#include "common/formats/marked_document.h"

namespace fanyi::testing_util {

// `text` with its inline markers written [0], [1], ..., so that
// expectations stay readable.
std::string ShowMarkers(const std::string& text);

// Each text of `document`, shown so.
std::vector<std::string> ShownTexts(const MarkedDocument& document);

// A stand-in for translation in the format readers' tests: rewrites a
// text's code points, markers included, so that where each text and
// marker came back is visible.
using Rewrite = std::function<std::u32string(std::u32string)>;

// `document` rendered with each text rewritten by `rewrite`.
std::string RenderRewritten(const MarkedDocument& document,
                            const Rewrite& rewrite);

// `text` with ASCII letters in upper case.
std::u32string UpperCase(std::u32string text);

// UpperCase, with the text's markers in reverse order too: every marker
// moves, none is lost (the format fuzzers' rewrite).
std::u32string UpperCaseWithMarkersReversed(std::u32string text);

}  // namespace fanyi::testing_util

#endif  // FANYI_TESTS_MARKED_TEXT_H_
