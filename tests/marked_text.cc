#include "tests/marked_text.h"

#include <utility>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi::testing_util {

std::string ShowMarkers(const std::string& text) {
  std::string shown;
  for (char32_t c : DecodeUtf8(text)) {
    const int marker = InlineMarkerIndex(c);
    if (marker >= 0) {
      shown += "[" + std::to_string(marker) + "]";
    } else {
      AppendUtf8(c, &shown);
    }
  }
  return shown;
}

std::vector<std::string> ShownTexts(const MarkedDocument& document) {
  std::vector<std::string> shown;
  for (const std::string& text : document.texts()) {
    shown.push_back(ShowMarkers(text));
  }
  return shown;
}

std::string RenderRewritten(const MarkedDocument& document,
                            const Rewrite& rewrite) {
  std::vector<std::string> translations;
  for (const std::string& text : document.texts()) {
    translations.push_back(EncodeUtf8(rewrite(DecodeUtf8(text))));
  }
  return document.Render(translations);
}

std::u32string UpperCase(std::u32string text) {
  for (char32_t& c : text) {
    if (c >= 'a' && c <= 'z') c -= 'a' - 'A';
  }
  return text;
}

std::u32string UpperCaseWithMarkersReversed(std::u32string text) {
  std::vector<char32_t> markers;
  for (char32_t c : text) {
    if (InlineMarkerIndex(c) >= 0) markers.push_back(c);
  }
  for (char32_t& c : text) {
    if (InlineMarkerIndex(c) >= 0) {
      c = markers.back();
      markers.pop_back();
    }
  }
  return UpperCase(std::move(text));
}

}  // namespace fanyi::testing_util
