#include "common/text/span_finder.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

std::u32string Lowercase(std::u32string_view text) {
  std::u32string lower(text);
  for (char32_t& c : lower) c = ToLower(c);
  return lower;
}

bool IsAsciiAlnum(char32_t c) {
  return IsAsciiDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Starts a word: no letter or digit right before it.
bool AtWordStart(const std::u32string& text, std::size_t i) {
  return i == 0 || !IsLetterOrDigit(text[i - 1]);
}

bool EndsWord(const std::u32string& text, std::size_t end) {
  return end >= text.size() || !IsLetterOrDigit(text[end]);
}

// True when text[i..] starts with `prefix`, ASCII case ignored.
bool StartsWithIgnoringCase(const std::u32string& text, std::size_t i,
                            std::u32string_view prefix) {
  if (text.size() - i < prefix.size()) return false;
  for (std::size_t k = 0; k < prefix.size(); ++k) {
    if (ToLower(text[i + k]) != prefix[k]) return false;
  }
  return true;
}

std::size_t UrlEnd(const std::u32string& text, std::size_t i) {
  if (!StartsWithIgnoringCase(text, i, U"http://") &&
      !StartsWithIgnoringCase(text, i, U"https://") &&
      !StartsWithIgnoringCase(text, i, U"www.")) {
    return i;
  }
  std::size_t end = i;
  while (end < text.size() && !IsSpace(text[end]) && !IsCjk(text[end]) &&
         InlineMarkerIndex(text[end]) < 0) {
    ++end;
  }
  while (end > i && IsTrailingPunctuation(text[end - 1])) --end;
  return end;
}

bool IsEmailLocal(char32_t c) {
  return IsAsciiAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' ||
         c == '-';
}

// Finds e-mail addresses at word starts, scanning each stretch of text once:
// every word start inside one run of address characters ("a.b.c") shares
// that run's end, and every run that ends at one '@' shares its domain, so
// both are remembered instead of scanned again ("a.a.a.…@x" would otherwise
// take time quadratic in its length).
class EmailScanner {
 public:
  explicit EmailScanner(const std::u32string& text) : text_(text) {}

  // The end of the address starting at word start `i`, or `i`.
  std::size_t End(std::size_t i) {
    if (i >= local_end_) {
      local_end_ = i;
      while (local_end_ < text_.size() && IsEmailLocal(text_[local_end_])) {
        ++local_end_;
      }
    }
    const std::size_t at = local_end_;
    if (at == i || at >= text_.size() || text_[at] != '@') return i;
    if (at != domain_at_) {
      domain_at_ = at;
      domain_end_ = DomainEnd(at);
    }
    return domain_end_ > at ? domain_end_ : i;
  }

 private:
  // The end of a valid domain after the '@' at `at` (with a dot, not ending
  // in '.' or '-'), or `at` when there is none.
  std::size_t DomainEnd(std::size_t at) const {
    std::size_t end = at + 1;
    while (end < text_.size() && (IsAsciiAlnum(text_[end]) ||
                                  text_[end] == '.' || text_[end] == '-')) {
      ++end;
    }
    while (end > at + 1 && (text_[end - 1] == '.' || text_[end - 1] == '-')) {
      --end;
    }
    const bool dot = std::find(text_.begin() + at + 1, text_.begin() + end,
                               '.') != text_.begin() + end;
    return dot && end > at + 1 ? end : at;
  }

  const std::u32string& text_;
  std::size_t local_end_ = 0;  // End of the last run of address characters.
  std::size_t domain_at_ = std::u32string::npos;  // The '@' last looked at,
  std::size_t domain_end_ = 0;                    // and its domain's end.
};

bool IsCurrencySign(char32_t c) {
  return c == '$' || c == 0x20AC || c == 0x00A3 || c == 0x00A5 || c == '#' ||
         c == '+';
}

// Joins letters and digits inside a code: 2.50, 1,000, 3:30, 12/25, X-100.
bool IsCodeJoiner(char32_t c) {
  return c == '.' || c == ',' || c == ':' || c == '/' || c == '-' || c == '_';
}

// The end of the word starting at `i` (letters and digits, with
// `joins` between them), and whether it holds a digit.
std::size_t WordEnd(const std::u32string& text, std::size_t i,
                    bool (*joins)(char32_t), bool* has_digit) {
  std::size_t end = i;
  *has_digit = false;
  while (true) {
    while (end < text.size() && IsLetterOrDigit(text[end])) {
      *has_digit = *has_digit || IsAsciiDigit(text[end]);
      ++end;
    }
    if (end + 1 < text.size() && joins(text[end]) &&
        IsLetterOrDigit(text[end + 1])) {
      ++end;
      continue;
    }
    return end;
  }
}

// Joins a plain word as the tokenizer sees it: e-mail, don't, Tom's.
bool IsWordJoiner(char32_t c) { return c == '-' || IsApostrophe(c); }

// Drops an English clitic ('s, 're, 've, 'll, 'd, 'm) from the end of the
// word [begin, end): "Zelensky's" passes through as "Zelensky" + "'s".
std::size_t WithoutClitic(const std::u32string& text, std::size_t begin,
                          std::size_t end) {
  for (std::u32string_view clitic : {U"s", U"re", U"ve", U"ll", U"d", U"m"}) {
    if (end - begin > clitic.size() + 1 &&
        IsApostrophe(text[end - clitic.size() - 1]) &&
        Lowercase(std::u32string_view(text).substr(end - clitic.size(),
                                                   clitic.size())) == clitic) {
      return end - clitic.size() - 1;
    }
  }
  return end;
}

}  // namespace

SpanFinder::SpanFinder(const std::vector<std::string>& glossary_sources,
                       bool template_tokens)
    : template_tokens_(template_tokens) {
  glossary_trie_.emplace_back();  // The root.
  for (std::size_t k = 0; k < glossary_sources.size(); ++k) {
    std::u32string key = Lowercase(DecodeUtf8(glossary_sources[k]));
    while (!key.empty() && IsSpace(key.back())) key.pop_back();
    while (!key.empty() && IsSpace(key.front())) key.erase(key.begin());
    if (key.empty()) {
      throw std::invalid_argument("glossary entry " + std::to_string(k) +
                                  " has an empty source term");
    }
    int node = 0;
    for (char32_t c : key) {
      const auto found = glossary_trie_[node].children.find(c);
      if (found != glossary_trie_[node].children.end()) {
        node = found->second;
        continue;
      }
      const int child = static_cast<int>(glossary_trie_.size());
      glossary_trie_[node].children.emplace(c, child);
      glossary_trie_.emplace_back();
      node = child;
    }
    // Of equal terms, the first listed.
    if (glossary_trie_[node].entry < 0) {
      glossary_trie_[node].entry = static_cast<int>(k);
    }
  }
}

int SpanFinder::GlossaryMatch(const std::u32string& text, std::size_t i,
                              std::size_t* end) const {
  // One walk down the trie of the lowercased terms: the work is the length
  // of the longest term, however many terms there are.
  int best = -1;
  int node = 0;
  for (std::size_t at = i; at < text.size(); ++at) {
    const auto next = glossary_trie_[node].children.find(ToLower(text[at]));
    if (next == glossary_trie_[node].children.end()) break;
    node = next->second;
    if (glossary_trie_[node].entry >= 0 && EndsWord(text, at + 1)) {
      best = glossary_trie_[node].entry;  // Longer than any before.
      *end = at + 1;
    }
  }
  return best;
}

std::vector<Span> SpanFinder::Find(const std::u32string& text) const {
  std::vector<Span> spans;
  EmailScanner emails(text);
  // The end of the last run of letters and digits joined by code joiners,
  // so that no word start inside it scans it again.
  std::size_t code_end = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (InlineMarkerIndex(text[i]) >= 0) {
      spans.push_back({i, i + 1, SpanKind::kMarkup});
      ++i;
      continue;
    }
    if (const std::size_t end = PlaceholderEnd(text, i); end > i) {
      spans.push_back({i, end, SpanKind::kLiteral});
      i = end;
      continue;
    }
    // Template tokens before words: "{0}" and "%1$s" are no numbers, and a
    // token may begin inside a word ("Fi&le", "file%s").
    TemplateTokenKind token = TemplateTokenKind::kNone;
    if (const std::size_t end =
            template_tokens_ ? TemplateTokenEnd(text, i, &token) : i;
        end > i) {
      spans.push_back({i, end, SpanKind::kTemplate, -1, token});
      i = end;
      continue;
    }
    if (!AtWordStart(text, i)) {
      ++i;
      continue;
    }
    // URLs and addresses first: a glossary term inside one is not a term.
    std::size_t end = i;
    int entry = -1;
    if ((end = UrlEnd(text, i)) > i) {
      spans.push_back({i, end, SpanKind::kUrl});
    } else if ((end = emails.End(i)) > i) {
      spans.push_back({i, end, SpanKind::kEmail});
    } else if ((entry = GlossaryMatch(text, i, &end)) >= 0) {
      spans.push_back({i, end, SpanKind::kGlossary, entry});
    } else if (IsLetterOrDigit(text[i]) ||
               (IsCurrencySign(text[i]) && i + 1 < text.size() &&
                IsAsciiDigit(text[i + 1]))) {
      const std::size_t start = IsLetterOrDigit(text[i]) ? i : i + 1;
      bool has_digit = false;
      if (start < code_end) {
        // Inside the joined run ("a.a.a") that a word start before this one
        // scanned: it ends there too, and held no digit (or it would have
        // been one number span, skipped whole).
        end = code_end;
      } else {
        end = code_end = WordEnd(text, start, IsCodeJoiner, &has_digit);
      }
      if (has_digit) {
        if (end < text.size() && text[end] == '%') ++end;
        spans.push_back({i, end, SpanKind::kNumber});
      } else if (start == i) {
        // A plain word, without the clitic the tokenizer splits off.
        end = WordEnd(text, i, IsWordJoiner, &has_digit);
        spans.push_back({i, WithoutClitic(text, i, end), SpanKind::kWord});
      } else {
        end = i + 1;  // A lone sign.
      }
    } else {
      end = i + 1;
    }
    i = std::max(end, i + 1);
  }
  return spans;
}

std::string SpanText(const std::u32string& text, const Span& span) {
  return EncodeUtf8(
      std::u32string_view(text).substr(span.begin, span.end - span.begin));
}

std::string ReplaceSpans(const std::u32string& text,
                         const std::vector<Span>& spans, int first_index) {
  std::string out;
  std::size_t at = 0;
  for (std::size_t k = 0; k < spans.size(); ++k) {
    out +=
        EncodeUtf8(std::u32string_view(text).substr(at, spans[k].begin - at));
    out += PlaceholderToken(first_index + static_cast<int>(k) + 1);
    at = spans[k].end;
  }
  out += EncodeUtf8(std::u32string_view(text).substr(at));
  return out;
}

}  // namespace fanyi
