#ifndef FANYI_COMMON_TEXT_SPAN_FINDER_H_
#define FANYI_COMMON_TEXT_SPAN_FINDER_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common/text/template_tokens.h"

namespace fanyi {

enum class SpanKind {
  kMarkup,
  kGlossary,
  kUrl,
  kEmail,
  kNumber,
  kWord,
  kLiteral,  // A placeholder's own form (｟1｠) written in the text.
  kTemplate  // A template token: %s, {name}, {{x}}, &File's &, an emoji...
};

// A span of a decoded sentence, [begin, end) in code points.
struct Span {
  std::size_t begin;
  std::size_t end;
  SpanKind kind;
  int glossary_entry = -1;  // For kGlossary: the term's index.
  // For kTemplate: which kind of token.
  TemplateTokenKind token = TemplateTokenKind::kNone;
};

// Finds the spans of a sentence that may pass through translation: inline
// markers (each its own span), placeholder forms the text itself holds
// (｟1｠, which must not read as the model's placeholders), glossary terms
// (matched case-insensitively on word boundaries, the longest first, through a
// trie), template tokens (TemplateTokenEnd; unless told not to look for
// them), URLs (http://, https://, www.), e-mail addresses, words holding a
// digit (numbers, decimals, times, dates, prices with their currency sign and
// percent sign, codes such as BA2490 or X-100), and the other words (kWord),
// without the English clitic the tokenizer splits off, for the caller to judge.
// Thread-safe: const.
class SpanFinder {
 public:
  // Throws std::invalid_argument for a blank glossary source term.
  explicit SpanFinder(const std::vector<std::string>& glossary_sources = {},
                      bool template_tokens = true);

  // Every span of `text`, left to right, without overlaps. Linear in the
  // text's length (times the longest glossary term's).
  std::vector<Span> Find(const std::u32string& text) const;

 private:
  // A node of the trie of glossary terms (lowercased, trimmed).
  struct TrieNode {
    std::map<char32_t, int> children;  // By the next character: a node.
    int entry = -1;  // The term ending here (its glossary index), or -1.
  };

  // The longest glossary term at `i` ending on a word boundary, its index,
  // with `*end`; -1 when none is there.
  int GlossaryMatch(const std::u32string& text, std::size_t i,
                    std::size_t* end) const;

  std::vector<TrieNode> glossary_trie_;  // [0] is the root.
  bool template_tokens_;
};

// The text of `span` in `text`, as UTF-8.
std::string SpanText(const std::u32string& text, const Span& span);

// `text` with spans[k] (in order, not overlapping) replaced by placeholder
// first_index + k + 1.
std::string ReplaceSpans(const std::u32string& text,
                         const std::vector<Span>& spans, int first_index = 0);

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_SPAN_FINDER_H_
