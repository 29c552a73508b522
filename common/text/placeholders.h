// Placeholder tokens ｟1｠, ｟2｠, ...: how spans that pass through translation
// verbatim (numbers, prices, times, codes, URLs, e-mail addresses, unknown
// names) or with a fixed translation (glossary terms) are carried across,
// and how a translation gets them back. Finding the spans is SpanFinder's;
// masking them PlaceholderMasker's (a text to translate) and PairMasker's
// (a training pair).
#ifndef FANYI_COMMON_TEXT_PLACEHOLDERS_H_
#define FANYI_COMMON_TEXT_PLACEHOLDERS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fanyi {

// The placeholder token for the `index`-th span of a sentence (from 1):
// "｟1｠", "｟2｠", ... (OpenNMT's placeholder brackets, U+FF5F and U+FF60,
// which the tokenizers keep as one token).
std::string PlaceholderToken(int index);

// The index of a placeholder token, or 0 when `token` is not one.
int PlaceholderIndex(std::string_view token);

// Inline markers: how a document format (common/formats/) stands for an
// inline element (a tag with the words it wraps, a comment) inside a text
// to translate. They are the noncharacters U+FDD0 + k, which Unicode keeps
// for a program's internal use, so text never means one. The masker carries
// each through the model as a placeholder, before any other span, so that
// each comes back exactly once.
constexpr int kMaxInlineMarkers = 32;

// The marker for inline element `index` (0 <= index < kMaxInlineMarkers).
char32_t InlineMarker(int index);

// The index of an inline marker, or -1 when `c` is not one.
int InlineMarkerIndex(char32_t c);

// The end of the placeholder form (｟, digits, ｠) that starts at text[i],
// or `i` when none does; for scanners of decoded text (the tokenizers).
std::size_t PlaceholderEnd(std::u32string_view text, std::size_t i);

// A translation with its placeholders replaced.
struct RestoredText {
  std::string text;
  // Spans whose placeholder the translation lacked: appended at its end
  // (before closing punctuation), so that nothing is lost.
  int unplaced = 0;
};

// Replaces each ｟k｠ in `translation` by restorations[k - 1]. A placeholder
// the translation repeats is restored once; one with no restoration is
// dropped; a restoration whose placeholder is missing is appended before
// the final punctuation (after every span placed or appended before it, so
// never into a span's own closing brace), separated from Latin text by a
// space.
RestoredText RestorePlaceholders(std::string_view translation,
                                 const std::vector<std::string>& restorations);

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_PLACEHOLDERS_H_
