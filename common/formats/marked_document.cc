#include "common/formats/marked_document.h"

#include <stdexcept>
#include <utility>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {

MarkedDocument::MarkedDocument(std::string source)
    : source_(std::move(source)) {
  regions_.push_back({0, source_.size(), {}});
}

int MarkedDocument::AddRegion(std::size_t begin, std::size_t end) {
  if (begin > end || end > source_.size()) {
    throw std::out_of_range("region [" + std::to_string(begin) + ", " +
                            std::to_string(end) + ") is outside the " +
                            std::to_string(source_.size()) + "-byte document");
  }
  regions_.push_back({begin, end, {}});
  return static_cast<int>(regions_.size()) - 1;
}

bool MarkedDocument::AddText(int region, std::size_t begin, std::size_t end,
                             std::string text, std::vector<int> markers,
                             TextWriting writing) {
  if (region < 0 || region >= static_cast<int>(regions_.size()) ||
      markers.size() > static_cast<std::size_t>(kMaxInlineMarkers)) {
    return false;
  }
  Region& into = regions_[region];
  const std::size_t after =
      into.edits.empty() ? into.begin : into.edits.back().end;
  if (begin < after || begin > end || end > into.end) return false;
  std::size_t cursor = begin;
  for (int marker : markers) {
    if (marker <= 0 || marker >= static_cast<int>(regions_.size()) ||
        regions_[marker].begin < cursor || regions_[marker].end > end) {
      return false;
    }
    cursor = regions_[marker].end;
  }
  texts_.push_back(std::move(text));
  into.edits.push_back({begin, end, static_cast<int>(texts_.size()) - 1,
                        std::move(markers), std::move(writing)});
  return true;
}

std::string MarkedDocument::Words() const {
  std::string words;
  for (const std::string& text : texts_) {
    for (char32_t c : DecodeUtf8(text)) {
      if (InlineMarkerIndex(c) < 0) AppendUtf8(c, &words);
    }
    words.push_back('\n');
  }
  return words;
}

std::string MarkedDocument::Render(
    const std::vector<std::string>& translations) const {
  if (translations.size() != texts_.size()) {
    throw std::invalid_argument(
        "Render: " + std::to_string(translations.size()) +
        " translations for " + std::to_string(texts_.size()) + " texts");
  }
  std::string out;
  out.reserve(source_.size() * 2);
  RenderRegion(0, translations, &out);
  return out;
}

void MarkedDocument::RenderRegion(int index,
                                  const std::vector<std::string>& translations,
                                  std::string* out) const {
  const Region& region = regions_[index];
  std::size_t cursor = region.begin;
  for (const Edit& edit : region.edits) {
    out->append(source_, cursor, edit.begin - cursor);
    RenderEdit(edit, translations, out);
    cursor = edit.end;
  }
  out->append(source_, cursor, region.end - cursor);
}

void MarkedDocument::RenderEdit(const Edit& edit,
                                const std::vector<std::string>& translations,
                                std::string* out) const {
  const TextWriting& writing = edit.writing;
  const bool unquoted =
      writing.escape == TextEscape::kMarkupAttribute && writing.quote == 0;
  const char quote = unquoted ? '"' : writing.quote;
  if (unquoted) out->push_back(quote);
  std::vector<bool> placed(edit.markers.size(), false);
  std::u32string words;  // Text since the last marker, not yet written.
  auto flush_words = [&] {
    if (words.empty()) return;
    *out += writing.words_before;
    *out += EscapeText(EncodeUtf8(words), writing.escape, quote);
    *out += writing.words_after;
    words.clear();
  };
  for (char32_t c : DecodeUtf8(translations[edit.text])) {
    const int marker = InlineMarkerIndex(c);
    if (marker < 0) {
      words.push_back(c);
      continue;
    }
    // A marker of no element of this text, or one already written, is
    // dropped: each element appears once.
    if (marker >= static_cast<int>(placed.size()) || placed[marker]) continue;
    placed[marker] = true;
    flush_words();
    RenderRegion(edit.markers[marker], translations, out);
  }
  flush_words();
  for (std::size_t k = 0; k < placed.size(); ++k) {
    if (!placed[k]) RenderRegion(edit.markers[k], translations, out);
  }
  if (unquoted) out->push_back(quote);
}

std::string EscapeText(std::string_view text, TextEscape escape, char quote) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (escape == TextEscape::kNone) {
      out.push_back(c);
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (escape == TextEscape::kMarkupAttribute && c == quote) {
      out += quote == '"' ? "&quot;" : "&#39;";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::u32string DecodeWords(std::string_view text) {
  std::u32string decoded = DecodeUtf8(text);
  for (char32_t& c : decoded) {
    if (InlineMarkerIndex(c) >= 0) c = 0xFFFD;
  }
  return decoded;
}

std::u32string CollapseSpaces(std::u32string_view text) {
  std::u32string out;
  bool space = false;
  for (char32_t c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

bool HasLetters(std::u32string_view text) {
  for (char32_t c : text) {
    if (InlineMarkerIndex(c) < 0 &&
        (IsCjk(c) || (IsLetterOrDigit(c) && !(c >= '0' && c <= '9')))) {
      return true;
    }
  }
  return false;
}

}  // namespace fanyi
