#include "common/text/aligned_placeholders.h"

#include <stdexcept>
#include <string_view>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr std::string_view kSpacePiece = "\u2581";  // SentencePiece's "▁"

bool StartsWord(const std::string& piece) {
  return piece.compare(0, kSpacePiece.size(), kSpacePiece) == 0;
}

// Whether `c` belongs to a word written with spaces around it (a Latin,
// Cyrillic, ... letter or a digit; not Chinese or Japanese).
bool IsAlphabetic(char32_t c) { return IsLetterOrDigit(c) && !IsCjk(c); }

// Whether the piece at `j` continues the word of the piece before it.
bool ContinuesWord(const std::vector<std::string>& pieces, std::size_t j) {
  if (j == 0 || StartsWord(pieces[j]) || pieces[j].empty() ||
      pieces[j - 1].empty()) {
    return false;
  }
  const std::u32string piece = DecodeUtf8(pieces[j]);
  const std::u32string before = DecodeUtf8(pieces[j - 1]);
  return IsAlphabetic(piece.front()) && IsAlphabetic(before.back());
}

}  // namespace

std::vector<std::string> TakeOutPlaceholders(
    const std::vector<std::string>& pieces,
    std::vector<PlaceholderAnchor>* anchors) {
  std::vector<std::string> kept;
  kept.reserve(pieces.size());
  for (const std::string& piece : pieces) {
    if (const int index = PlaceholderIndex(piece); index > 0) {
      anchors->push_back({index, static_cast<int32_t>(kept.size())});
    } else {
      kept.push_back(piece);
    }
  }
  return kept;
}

std::vector<std::string> PutBackPlaceholders(
    const std::vector<std::string>& pieces,
    const std::vector<int32_t>& positions,
    const std::vector<PlaceholderAnchor>& anchors, bool subword) {
  if (pieces.size() != positions.size()) {
    throw std::invalid_argument(
        "PutBackPlaceholders: " + std::to_string(pieces.size()) +
        " pieces and " + std::to_string(positions.size()) + " positions");
  }
  // Per piece, the anchors that go before it, in source order.
  std::vector<std::vector<int>> before(pieces.size());
  for (const PlaceholderAnchor& anchor : anchors) {
    std::size_t best = pieces.size();
    for (std::size_t t = 0; t < pieces.size(); ++t) {
      if (positions[t] >= anchor.before &&
          (best == pieces.size() || positions[t] < positions[best])) {
        best = t;
      }
    }
    if (best == pieces.size()) continue;  // Appended when restored.
    if (subword) {
      while (ContinuesWord(pieces, best)) --best;
    }
    before[best].push_back(anchor.index);
  }
  std::vector<std::string> placed;
  placed.reserve(pieces.size() + anchors.size());
  for (std::size_t t = 0; t < pieces.size(); ++t) {
    for (int index : before[t]) {
      placed.push_back(
          subword && StartsWord(pieces[t])
              ? std::string(kSpacePiece) + PlaceholderToken(index)
              : PlaceholderToken(index));
    }
    placed.push_back(pieces[t]);
  }
  return placed;
}

}  // namespace fanyi
