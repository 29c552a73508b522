// SentencePiece's text normalization from a model's precompiled character
// map, as its spm_train writes one for the "nmt_nfkc" rule (its default),
// "nfkc" and the others.
#ifndef FANYI_COMMON_TEXT_CHARSMAP_NORMALIZER_H_
#define FANYI_COMMON_TEXT_CHARSMAP_NORMALIZER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fanyi {

// A SentencePiece model's normalizer_spec.precompiled_charsmap applied as
// SentencePiece's Normalizer applies it (with add_dummy_prefix,
// remove_extra_whitespaces and escape_whitespaces, its defaults): at each
// position the longest rule of the map that matches the text there is
// replaced by its output, a character no rule matches is kept, and a byte
// that starts no valid UTF-8 character becomes U+FFFD. Spaces are then
// collapsed and trimmed.
//
// The map is a 4-byte little-endian length, a Darts double-array trie of
// that many bytes over the rules' UTF-8 (each leaf's value an offset into
// the rest), then the rules' outputs, each ending in a NUL. A map read from
// a hostile file is checked when it is read: every rule's output inside
// the outputs, none longer than kMaxOutputBytes or with two spaces in a
// row; every trie step stays inside the array, and no rule is looked for
// past kMaxRuleBytes (SentencePiece has no such bound; the rules of its
// NFKC maps are far shorter), so normalizing costs time and memory linear
// in the text.
//
// Immutable once built; thread-safe.
class CharsMapNormalizer {
 public:
  static constexpr size_t kMaxRuleBytes = 256;
  static constexpr size_t kMaxOutputBytes = 64;  // nmt_nfkc's longest: 33.

  // Reads a precompiled map; throws std::invalid_argument naming what is
  // wrong.
  explicit CharsMapNormalizer(std::string_view charsmap);

  // `text` normalized, with words separated by single spaces and no space
  // before the first or after the last (SentencePiece then writes each
  // space, and one before the text, as "▁"). `*leading_space`, when given,
  // says whether the text began with characters that normalize to spaces.
  std::string Normalize(std::string_view text,
                        bool* leading_space = nullptr) const;

 private:
  // The output of the longest rule matching the start of `text`, and the
  // bytes it consumes; the first character itself when no rule matches.
  std::pair<std::string_view, size_t> NormalizePrefix(
      std::string_view text) const;

  std::vector<uint32_t> trie_;  // Darts units.
  std::string outputs_;         // NUL-terminated outputs.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_CHARSMAP_NORMALIZER_H_
