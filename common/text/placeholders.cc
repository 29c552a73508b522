#include "common/text/placeholders.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr char32_t kOpen = 0xFF5F;   // ｟
constexpr char32_t kClose = 0xFF60;  // ｠

enum class SpanKind { kGlossary, kUrl, kEmail, kNumber, kWord };

// A span of a decoded sentence, [begin, end) in code points.
struct Span {
  std::size_t begin;
  std::size_t end;
  SpanKind kind;
  int glossary_entry = -1;  // For kGlossary.
};

std::u32string Lowercase(std::u32string_view text) {
  std::u32string lower(text);
  for (char32_t& c : lower) c = ToLower(c);
  return lower;
}

bool IsAsciiDigit(char32_t c) { return c >= '0' && c <= '9'; }

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

// Closing punctuation that ends a sentence or a clause rather than a URL.
bool IsTrailingPunctuation(char32_t c) {
  return c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?' ||
         c == ')' || c == ']' || c == '}' || c == '"' || c == '\'' ||
         c == 0x2019 || c == 0x201D || c == 0x3002 || c == 0xFF0C;
}

std::size_t UrlEnd(const std::u32string& text, std::size_t i) {
  if (!StartsWithIgnoringCase(text, i, U"http://") &&
      !StartsWithIgnoringCase(text, i, U"https://") &&
      !StartsWithIgnoringCase(text, i, U"www.")) {
    return i;
  }
  std::size_t end = i;
  while (end < text.size() && !IsSpace(text[end]) && !IsCjk(text[end])) ++end;
  while (end > i && IsTrailingPunctuation(text[end - 1])) --end;
  return end;
}

bool IsEmailLocal(char32_t c) {
  return IsAsciiAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' ||
         c == '-';
}

std::size_t EmailEnd(const std::u32string& text, std::size_t i) {
  std::size_t at = i;
  while (at < text.size() && IsEmailLocal(text[at])) ++at;
  if (at == i || at >= text.size() || text[at] != '@') return i;
  std::size_t end = at + 1;
  bool dot = false;
  while (end < text.size() &&
         (IsAsciiAlnum(text[end]) || text[end] == '.' || text[end] == '-')) {
    dot = dot || text[end] == '.';
    ++end;
  }
  while (end > at + 1 && (text[end - 1] == '.' || text[end - 1] == '-')) --end;
  const bool domain_dot = std::find(text.begin() + at + 1, text.begin() + end,
                                    '.') != text.begin() + end;
  return dot && domain_dot && end > at + 1 ? end : i;
}

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

bool IsApostrophe(char32_t c) { return c == '\'' || c == 0x2019; }

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

// The longest glossary key at `i`, or -1.
int GlossaryMatch(const std::u32string& text, std::size_t i,
                  const std::vector<std::u32string>& keys, std::size_t* end) {
  int best = -1;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::size_t key_end = i + keys[k].size();
    if (StartsWithIgnoringCase(text, i, keys[k]) && EndsWord(text, key_end) &&
        (best < 0 || keys[k].size() > keys[best].size())) {
      best = static_cast<int>(k);
      *end = key_end;
    }
  }
  return best;
}

// Every span of `text`, left to right, without overlaps. Words without a
// digit come back as kWord for the caller to judge.
std::vector<Span> FindSpans(const std::u32string& text,
                            const std::vector<std::u32string>& glossary) {
  std::vector<Span> spans;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!AtWordStart(text, i)) {
      ++i;
      continue;
    }
    // URLs and addresses first: a glossary term inside one is not a term.
    std::size_t end = i;
    int entry = -1;
    if ((end = UrlEnd(text, i)) > i) {
      spans.push_back({i, end, SpanKind::kUrl});
    } else if ((end = EmailEnd(text, i)) > i) {
      spans.push_back({i, end, SpanKind::kEmail});
    } else if ((entry = GlossaryMatch(text, i, glossary, &end)) >= 0) {
      spans.push_back({i, end, SpanKind::kGlossary, entry});
    } else if (IsLetterOrDigit(text[i]) ||
               (IsCurrencySign(text[i]) && i + 1 < text.size() &&
                IsAsciiDigit(text[i + 1]))) {
      const std::size_t start = IsLetterOrDigit(text[i]) ? i : i + 1;
      bool has_digit = false;
      end = WordEnd(text, start, IsCodeJoiner, &has_digit);
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

std::string Slice(const std::u32string& text, const Span& span) {
  return EncodeUtf8(
      std::u32string_view(text).substr(span.begin, span.end - span.begin));
}

// `text` with spans[k] replaced by placeholder first_index + k + 1.
std::string Replace(const std::u32string& text, const std::vector<Span>& spans,
                    int first_index = 0) {
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

// A number's digits alone ("1,000" -> "1000"), or "" when it holds anything
// other than digits and separators (codes must match as written).
std::string DigitsOfNumber(const std::string& number) {
  std::string digits;
  for (char c : number) {
    if (c >= '0' && c <= '9') {
      digits.push_back(c);
    } else if (c != ',' && c != '.' && c != ' ') {
      return "";
    }
  }
  return digits;
}

bool SameSpan(const std::string& source, SpanKind source_kind,
              const std::string& target, SpanKind target_kind) {
  if (source == target) return true;
  if (source_kind != SpanKind::kNumber || target_kind != SpanKind::kNumber) {
    return false;
  }
  const std::string digits = DigitsOfNumber(source);
  return !digits.empty() && digits == DigitsOfNumber(target);
}

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
  while (end < text.size() && IsAsciiDigit(text[end])) ++end;
  if (end == i + 1 || end >= text.size() || text[end] != kClose) return i;
  return end + 1;
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

PlaceholderMasker::PlaceholderMasker(std::vector<GlossaryEntry> glossary,
                                     int max_placeholders)
    : glossary_(std::move(glossary)), max_placeholders_(max_placeholders) {
  if (max_placeholders < 0) {
    throw std::invalid_argument("max_placeholders must not be negative");
  }
  for (std::size_t k = 0; k < glossary_.size(); ++k) {
    std::u32string key = Lowercase(DecodeUtf8(glossary_[k].source));
    while (!key.empty() && IsSpace(key.back())) key.pop_back();
    while (!key.empty() && IsSpace(key.front())) key.erase(key.begin());
    if (key.empty()) {
      throw std::invalid_argument("glossary entry " + std::to_string(k) +
                                  " has an empty source term");
    }
    glossary_keys_.push_back(std::move(key));
  }
}

MaskedSentence PlaceholderMasker::Mask(
    std::string_view sentence, const VocabularyLookup* vocabulary) const {
  const std::u32string text = DecodeUtf8(sentence);
  // Glossary terms, URLs, addresses and numbers first; unknown words take
  // the placeholders left.
  std::vector<Span> masked;
  std::vector<Span> unknown;
  for (const Span& span : FindSpans(text, glossary_keys_)) {
    if (span.kind != SpanKind::kWord) {
      if (static_cast<int>(masked.size()) < max_placeholders_) {
        masked.push_back(span);
      }
    } else if (vocabulary != nullptr &&
               vocabulary->IsUnknown(Slice(text, span))) {
      unknown.push_back(span);
    }
  }
  MaskedSentence result;
  for (const Span& span : unknown) {
    result.unknown_words.push_back(Slice(text, span));
    if (static_cast<int>(masked.size()) < max_placeholders_) {
      masked.push_back(span);
    }
  }
  std::sort(masked.begin(), masked.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (const Span& span : masked) {
    const bool translated = span.kind == SpanKind::kGlossary &&
                            !glossary_[span.glossary_entry].target.empty();
    result.restorations.push_back(
        translated ? glossary_[span.glossary_entry].target : Slice(text, span));
  }
  result.text = Replace(text, masked);
  return result;
}

MaskedPair PlaceholderMasker::MaskPair(std::string_view source,
                                       std::string_view target,
                                       int first_index) const {
  const std::u32string source_text = DecodeUtf8(source);
  const std::u32string target_text = DecodeUtf8(target);
  const std::vector<Span> target_spans = FindSpans(target_text, {});
  std::vector<bool> used(target_spans.size(), false);
  // Pairs of (source span, target span), in source order.
  std::vector<Span> source_masked;
  std::vector<std::pair<Span, int>> target_masked;  // With the index.
  for (const Span& span : FindSpans(source_text, {})) {
    if (first_index + static_cast<int>(source_masked.size()) >=
        max_placeholders_) {
      break;
    }
    const std::string written = Slice(source_text, span);
    for (std::size_t t = 0; t < target_spans.size(); ++t) {
      if (used[t] || (span.kind == SpanKind::kWord) !=
                         (target_spans[t].kind == SpanKind::kWord)) {
        continue;
      }
      if (SameSpan(written, span.kind, Slice(target_text, target_spans[t]),
                   target_spans[t].kind)) {
        used[t] = true;
        source_masked.push_back(span);
        target_masked.emplace_back(target_spans[t],
                                   static_cast<int>(source_masked.size()));
        break;
      }
    }
  }
  std::sort(target_masked.begin(), target_masked.end(),
            [](const auto& a, const auto& b) {
              return a.first.begin < b.first.begin;
            });
  std::string masked_target;
  std::size_t at = 0;
  for (const auto& [span, index] : target_masked) {
    masked_target += EncodeUtf8(
        std::u32string_view(target_text).substr(at, span.begin - at));
    masked_target += PlaceholderToken(first_index + index);
    at = span.end;
  }
  masked_target += EncodeUtf8(std::u32string_view(target_text).substr(at));
  return {Replace(source_text, source_masked, first_index), masked_target,
          static_cast<int>(source_masked.size())};
}

RestoredText RestorePlaceholders(std::string_view translation,
                                 const std::vector<std::string>& restorations) {
  const std::u32string text = DecodeUtf8(translation);
  std::vector<bool> placed(restorations.size(), false);
  std::u32string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (const std::size_t end = PlaceholderEnd(text, i); end > i) {
      const int index = PlaceholderIndex(
          EncodeUtf8(std::u32string_view(text).substr(i, end - i)));
      if (index >= 1 && index <= static_cast<int>(restorations.size()) &&
          !placed[index - 1]) {
        placed[index - 1] = true;
        out += DecodeUtf8(restorations[index - 1]);
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
    const std::size_t at = ClosingPunctuationStart(out);
    std::u32string insert = span;
    if (at > 0 && IsLetterOrDigit(out[at - 1]) && !span.empty() &&
        IsLetterOrDigit(span.front())) {
      insert.insert(insert.begin(), ' ');
    }
    out.insert(at, insert);
  }
  restored.text = EncodeUtf8(out);
  return restored;
}

}  // namespace fanyi
