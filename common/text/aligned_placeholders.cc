#include "common/text/aligned_placeholders.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr std::string_view kSpacePiece = "\u2581";  // SentencePiece's "▁"

// Past any source a model reads.
constexpr int32_t kMaxSourcePosition = 1 << 24;

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
  // For each source position s, the piece aligned to the nearest position
  // at or after s, the earliest of those: one pass over the pieces, one
  // back over the positions.
  int32_t extent = 0;
  for (int32_t position : positions) {
    if (position < 0 || position >= kMaxSourcePosition) {
      throw std::invalid_argument("PutBackPlaceholders: position " +
                                  std::to_string(position) +
                                  " is not a source position");
    }
    extent = std::max(extent, position + 1);
  }
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> nearest(static_cast<std::size_t>(extent) + 1, kNone);
  for (std::size_t t = pieces.size(); t-- > 0;) {
    nearest[positions[t]] = t;
  }
  for (int32_t s = extent; s-- > 0;) {
    if (nearest[s] == kNone) nearest[s] = nearest[s + 1];
  }
  // Where each piece's word starts (alphabetic text only).
  std::vector<std::size_t> word_start(pieces.size());
  for (std::size_t t = 0; t < pieces.size(); ++t) {
    word_start[t] = subword && ContinuesWord(pieces, t) ? word_start[t - 1] : t;
  }
  // Per piece, the anchors that go before it, in source order.
  std::vector<std::vector<int>> before(pieces.size());
  for (const PlaceholderAnchor& anchor : anchors) {
    if (anchor.before < 0 || anchor.before >= extent) continue;  // Appended.
    const std::size_t piece = nearest[anchor.before];
    if (piece == kNone) continue;
    before[word_start[piece]].push_back(anchor.index);
  }
  std::vector<std::string> placed;
  placed.reserve(pieces.size() + anchors.size());
  for (std::size_t t = 0; t < pieces.size(); ++t) {
    for (int index : before[t]) {
      placed.push_back(subword && StartsWord(pieces[t])
                           ? std::string(kSpacePiece) + PlaceholderToken(index)
                           : PlaceholderToken(index));
    }
    placed.push_back(pieces[t]);
  }
  return placed;
}

}  // namespace fanyi
