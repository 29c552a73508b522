#include "common/text/placeholders.h"

#include <algorithm>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr char32_t kOpen = 0xFF5F;   // ｟
constexpr char32_t kClose = 0xFF60;  // ｠

// Where to append unplaced spans: before the closing punctuation.
std::size_t ClosingPunctuationStart(const std::u32string& text) {
  std::size_t at = text.size();
  while (at > 0 && (IsTrailingPunctuation(text[at - 1]) ||
                    text[at - 1] == 0xFF01 || text[at - 1] == 0xFF1F)) {
    --at;
  }
  return at;
}

}  // namespace

std::string PlaceholderToken(int index) {
  return "\uFF5F" + std::to_string(index) + "\uFF60";
}

std::size_t PlaceholderEnd(std::u32string_view text, std::size_t i) {
  if (i >= text.size() || text[i] != kOpen) return i;
  std::size_t end = i + 1;
  while (end < text.size() && (text[end] >= '0' && text[end] <= '9')) ++end;
  if (end == i + 1 || end >= text.size() || text[end] != kClose) return i;
  return end + 1;
}

char32_t InlineMarker(int index) { return 0xFDD0 + index; }

int InlineMarkerIndex(char32_t c) {
  return c >= 0xFDD0 && c < 0xFDD0 + kMaxInlineMarkers
             ? static_cast<int>(c - 0xFDD0)
             : -1;
}

int PlaceholderIndex(std::string_view token) {
  const std::string_view open = "\uFF5F";
  const std::string_view close = "\uFF60";
  if (token.size() <= open.size() + close.size() ||
      token.substr(0, open.size()) != open ||
      token.substr(token.size() - close.size()) != close) {
    return 0;
  }
  const std::string_view digits =
      token.substr(open.size(), token.size() - open.size() - close.size());
  if (digits.size() > 4 || digits.front() == '0') return 0;
  int index = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    index = index * 10 + (c - '0');
  }
  return index;
}

RestoredText RestorePlaceholders(std::string_view translation,
                                 const std::vector<std::string>& restorations) {
  const std::u32string text = DecodeUtf8(translation);
  std::vector<bool> placed(restorations.size(), false);
  std::u32string out;
  // Where the restored spans end: appended spans go after them, never into
  // a span that ends in what reads as punctuation ("{0}", "(x)").
  std::size_t spans_end = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (const std::size_t end = PlaceholderEnd(text, i); end > i) {
      const int index = PlaceholderIndex(
          EncodeUtf8(std::u32string_view(text).substr(i, end - i)));
      if (index >= 1 && index <= static_cast<int>(restorations.size()) &&
          !placed[index - 1]) {
        placed[index - 1] = true;
        out += DecodeUtf8(restorations[index - 1]);
        spans_end = out.size();
      }
      i = end;
      continue;
    }
    out.push_back(text[i]);
    ++i;
  }
  RestoredText restored;
  for (std::size_t k = 0; k < restorations.size(); ++k) {
    if (placed[k]) continue;
    ++restored.unplaced;
    const std::u32string span = DecodeUtf8(restorations[k]);
    const std::size_t at = std::max(ClosingPunctuationStart(out), spans_end);
    std::u32string insert = span;
    if (at > 0 && IsLetterOrDigit(out[at - 1]) && !span.empty() &&
        IsLetterOrDigit(span.front())) {
      insert.insert(insert.begin(), ' ');
    }
    out.insert(at, insert);
    spans_end = at + insert.size();
  }
  restored.text = EncodeUtf8(out);
  return restored;
}

}  // namespace fanyi
