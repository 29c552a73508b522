// Placeholders through a model that never learned them (one imported from
// CTranslate2 or Argos): taken out of the source before it is decoded, and
// put back into the translation where the model's attention says, as
// Bergamot places tags by alignment.
#ifndef FANYI_COMMON_TEXT_ALIGNED_PLACEHOLDERS_H_
#define FANYI_COMMON_TEXT_ALIGNED_PLACEHOLDERS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace fanyi {

// A placeholder ｟index｠ taken out of a source: it stood before source
// piece `before` (the piece count when it stood at the end).
struct PlaceholderAnchor {
  int index = 0;
  int32_t before = 0;
};

// `pieces` with their placeholders taken out (PlaceholderIndex > 0), each
// named by an anchor in `anchors`, in order.
std::vector<std::string> TakeOutPlaceholders(
    const std::vector<std::string>& pieces,
    std::vector<PlaceholderAnchor>* anchors);

// `pieces`, a translation whose piece t aligns to source piece
// positions[t] (ContinuousDecoder::Finished::source_positions), with each
// anchor's ｟k｠ put back: before the first piece aligned to the nearest
// source piece at or after the one it stood before, moved back to the
// start of that piece's word in alphabetic text. With `subword`
// (SentencePiece pieces, "▁" for a space), it is written as "▁｟k｠" before
// a piece that starts a word and "｟k｠" elsewhere; otherwise as a token of
// its own. An anchor that no piece aligns at or after (it ended the
// source) is left out: RestorePlaceholders appends what it stands for.
// Throws std::invalid_argument when the counts of pieces and positions
// differ, or a position is negative or past any source. Linear in the
// pieces, the anchors and the source's length.
std::vector<std::string> PutBackPlaceholders(
    const std::vector<std::string>& pieces,
    const std::vector<int32_t>& positions,
    const std::vector<PlaceholderAnchor>& anchors, bool subword);

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_ALIGNED_PLACEHOLDERS_H_
