#include "common/text/template_tokens.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

// How deep braces may nest inside one token ({a, plural, one {{b}}}).
constexpr int kMaxBraceDepth = 8;

bool IsAsciiLetter(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool IsIdentifierStart(char32_t c) { return IsAsciiLetter(c) || c == '_'; }

bool IsIdentifierChar(char32_t c) {
  return IsIdentifierStart(c) || IsAsciiDigit(c);
}

// The end of the identifier at text[i] ([A-Za-z_][A-Za-z0-9_]*, within
// `limit`), or `i`.
std::size_t IdentifierEnd(const std::u32string& text, std::size_t i,
                          std::size_t limit) {
  if (i >= limit || !IsIdentifierStart(text[i])) return i;
  std::size_t end = i + 1;
  while (end < limit && IsIdentifierChar(text[end])) ++end;
  return end;
}

// The end of the digits at text[i] (within `limit`).
std::size_t DigitsEnd(const std::u32string& text, std::size_t i,
                      std::size_t limit) {
  while (i < limit && IsAsciiDigit(text[i])) ++i;
  return i;
}

bool StartsWith(const std::u32string& text, std::size_t i,
                std::u32string_view prefix, std::size_t limit) {
  return limit - std::min(i, limit) >= prefix.size() &&
         std::u32string_view(text).substr(i, prefix.size()) == prefix;
}

// printf's and Python's conversions, Objective-C's %@ and Python's %r.
bool IsConversion(char32_t c) {
  return std::u32string_view(U"diouxXeEfFgGaAcspn@r").find(c) !=
         std::u32string_view::npos;
}

// %% | %(name) spec | %N$ spec | spec, where spec is flags, width,
// precision, length and a conversion; or Qt's %N (digits, no conversion).
std::size_t PrintfEnd(const std::u32string& text, std::size_t i,
                      std::size_t limit) {
  std::size_t j = i + 1;
  if (j < limit && text[j] == '%') return j + 1;
  std::size_t qt_end = i;  // Where Qt's %N would end.
  if (j < limit && text[j] == '(') {
    const std::size_t name_end = IdentifierEnd(text, j + 1, limit);
    if (name_end == j + 1 || name_end >= limit || text[name_end] != ')') {
      return i;
    }
    j = name_end + 1;
  } else {
    const std::size_t digits_end = DigitsEnd(text, j, limit);
    if (digits_end > j && digits_end < limit && text[digits_end] == '$') {
      j = digits_end + 1;  // %1$s: a positional argument.
    } else if (digits_end > j && text[j] != '0') {
      qt_end = digits_end;  // %1, or the width of %5d.
    }
  }
  while (j < limit && (text[j] == '-' || text[j] == '+' || text[j] == '0' ||
                       text[j] == '#')) {
    ++j;
  }
  j = j < limit && text[j] == '*' ? j + 1 : DigitsEnd(text, j, limit);
  if (j < limit && text[j] == '.') {
    ++j;
    j = j < limit && text[j] == '*' ? j + 1 : DigitsEnd(text, j, limit);
  }
  for (std::u32string_view length :
       {U"hh", U"ll", U"h", U"l", U"L", U"q", U"j", U"z", U"t"}) {
    if (StartsWith(text, j, length, limit)) {
      j += length.size();
      break;
    }
  }
  if (j < limit && IsConversion(text[j])) return j + 1;
  return qt_end;
}

// The end of the brace group that opens at text[i] (nested groups inside),
// or `i` when it does not close within `limit` or nests too deep.
std::size_t BracesEnd(const std::u32string& text, std::size_t i,
                      std::size_t limit) {
  int depth = 0;
  for (std::size_t k = i; k < limit; ++k) {
    if (text[k] == '{') {
      if (++depth > kMaxBraceDepth) return i;
    } else if (text[k] == '}') {
      if (--depth == 0) return k + 1;
    } else if (text[k] == '\n') {
      return i;
    }
  }
  return i;
}

// &name; | &#digits; | &#xhex; (at most 32 characters between & and ;).
std::size_t EntityEnd(const std::u32string& text, std::size_t i,
                      std::size_t limit) {
  std::size_t j = i + 1;
  const std::size_t stop = std::min(limit, i + 34);
  if (j < stop && text[j] == '#') {
    ++j;
    const bool hex = j < stop && (text[j] == 'x' || text[j] == 'X');
    if (hex) ++j;
    const std::size_t digits = j;
    while (j < stop &&
           (IsAsciiDigit(text[j]) ||
            (hex && std::u32string_view(U"abcdefABCDEF").find(text[j]) !=
                        std::u32string_view::npos))) {
      ++j;
    }
    if (j == digits) return i;
  } else {
    while (j < stop && (IsAsciiLetter(text[j]) || IsAsciiDigit(text[j]))) ++j;
    if (j == i + 1) return i;
  }
  return j < stop && text[j] == ';' ? j + 1 : i;
}

// The elements software strings mark words with, as HTML tags in a plain
// string ("Click <b>Save</b>"); other names after a '<' are text ("a<b").
bool IsInlineElementName(std::u32string_view name) {
  if (name.size() > 6) return false;  // "strong", "strike": the longest.
  static constexpr std::u32string_view kNames[] = {
      U"a",   U"abbr", U"b",    U"big",   U"br",   U"code",   U"del",
      U"em",  U"font", U"i",    U"img",   U"ins",  U"kbd",    U"mark",
      U"q",   U"s",    U"samp", U"small", U"span", U"strike", U"strong",
      U"sub", U"sup",  U"tt",   U"u",     U"var"};
  std::u32string lower(name);
  for (char32_t& c : lower) {
    if (c >= 'A' && c <= 'Z') c += 'a' - 'A';
  }
  return std::find(std::begin(kNames), std::end(kNames), lower) !=
         std::end(kNames);
}

bool IsAsciiSpace(char32_t c) { return c == ' ' || c == '\t'; }

// The end of the attributes of an opening tag at text[i]: name="value" or
// name='value' pairs, each after a space; npos when one is malformed or
// reaches `limit`.
std::size_t AttributesEnd(const std::u32string& text, std::size_t i,
                          std::size_t limit) {
  std::size_t j = i;
  while (j < limit && IsAsciiSpace(text[j])) {
    while (j < limit && IsAsciiSpace(text[j])) ++j;
    const std::size_t name_end = IdentifierEnd(text, j, limit);
    if (name_end == j) return j;  // Spaces before '>' or '/>'.
    j = name_end;
    while (j < limit && (text[j] == '-' || IsIdentifierChar(text[j]))) ++j;
    if (j + 1 >= limit || text[j] != '=' ||
        (text[j + 1] != '"' && text[j + 1] != '\'')) {
      return std::u32string::npos;
    }
    const char32_t quote = text[j + 1];
    j += 2;
    while (j < limit && text[j] != quote && text[j] != '<' && text[j] != '>' &&
           text[j] != '\n') {
      ++j;
    }
    if (j >= limit || text[j] != quote) return std::u32string::npos;
    ++j;
  }
  return j;
}

// react-i18next's <N>, </N>, <N/> (N of 1 to 3 digits), and the tags of
// inline HTML elements: <b>, </b>, <br/>, <a href="...">.
std::size_t TagEnd(const std::u32string& text, std::size_t i,
                   std::size_t limit) {
  std::size_t j = i + 1;
  const bool closing = j < limit && text[j] == '/';
  if (closing) ++j;
  std::size_t name_end = DigitsEnd(text, j, limit);
  if (name_end > j) {
    if (name_end - j > 3) return i;
    j = name_end;
  } else {
    name_end = j;
    while (name_end < limit && IsAsciiLetter(text[name_end])) ++name_end;
    if (name_end == j || !IsInlineElementName(std::u32string_view(text).substr(
                             j, name_end - j))) {
      return i;
    }
    j = closing ? name_end : AttributesEnd(text, name_end, limit);
    if (j == std::u32string::npos) return i;
    while (j < limit && IsAsciiSpace(text[j])) ++j;
  }
  if (j < limit && text[j] == '/' && !closing) ++j;
  return j < limit && text[j] == '>' ? j + 1 : i;
}

// Pictographs: the emoji blocks of the supplementary plane, the
// miscellaneous symbols and dingbats, and the watches, arrows and shapes
// that have emoji forms.
bool IsPictograph(char32_t c) {
  return (c >= 0x1F000 && c <= 0x1FAFF) || (c >= 0x2600 && c <= 0x27BF) ||
         (c >= 0x2B00 && c <= 0x2BFF) || (c >= 0x231A && c <= 0x23FF);
}

// What continues an emoji: another pictograph (after a joiner), the
// joiner, variation selectors, the keycap mark, skin tones (pictographs
// already) and the tag characters of subdivision flags.
bool ContinuesEmoji(char32_t c) {
  return IsPictograph(c) || c == 0x200D || c == 0xFE0F || c == 0xFE0E ||
         c == 0x20E3 || (c >= 0xE0020 && c <= 0xE007F);
}

}  // namespace

std::string_view TemplateTokenKindName(TemplateTokenKind kind) {
  switch (kind) {
    case TemplateTokenKind::kNone:
      return "none";
    case TemplateTokenKind::kPrintf:
      return "printf";
    case TemplateTokenKind::kBraces:
      return "braces";
    case TemplateTokenKind::kDollar:
      return "dollar";
    case TemplateTokenKind::kColon:
      return "colon";
    case TemplateTokenKind::kAccelerator:
      return "accelerator";
    case TemplateTokenKind::kEntity:
      return "entity";
    case TemplateTokenKind::kTag:
      return "tag";
    case TemplateTokenKind::kEscape:
      return "escape";
    case TemplateTokenKind::kEmoji:
      return "emoji";
  }
  return "none";
}

std::size_t TemplateTokenEnd(const std::u32string& text, std::size_t i,
                             TemplateTokenKind* kind) {
  *kind = TemplateTokenKind::kNone;
  if (i >= text.size()) return i;
  const std::size_t limit = std::min(text.size(), i + kMaxTemplateTokenLength);
  const char32_t c = text[i];
  const char32_t before = i > 0 ? text[i - 1] : U' ';
  std::size_t end = i;
  TemplateTokenKind found = TemplateTokenKind::kNone;
  if (c == '%') {
    end = PrintfEnd(text, i, limit);
    found = TemplateTokenKind::kPrintf;
  } else if (c == '{') {
    end = BracesEnd(text, i, limit);
    found = TemplateTokenKind::kBraces;
  } else if (c == '$') {
    end = i + 1 < limit && text[i + 1] == '{'
              ? BracesEnd(text, i + 1, limit)
              : IdentifierEnd(text, i + 1, limit);
    if (end == i + 1) end = i;
    found = TemplateTokenKind::kDollar;
  } else if (c == ':') {
    // After a space or an opening sign, not inside a word or a "::".
    if (!IsLetterOrDigit(before) && before != ':') {
      end = IdentifierEnd(text, i + 1, limit);
      if (end == i + 1) end = i;
    }
    found = TemplateTokenKind::kColon;
  } else if (c == '&') {
    if ((end = EntityEnd(text, i, limit)) > i) {
      found = TemplateTokenKind::kEntity;
    } else if (before != '&' && i + 1 < limit && IsLetterOrDigit(text[i + 1])) {
      end = i + 1;  // The mark alone: its letter stays in its word.
      found = TemplateTokenKind::kAccelerator;
    }
  } else if (c == '<') {
    end = TagEnd(text, i, limit);
    found = TemplateTokenKind::kTag;
  } else if (c == '\\') {
    if (i + 1 < limit && std::u32string_view(U"ntr\"'\\").find(text[i + 1]) !=
                             std::u32string_view::npos) {
      end = i + 2;
    }
    found = TemplateTokenKind::kEscape;
  } else if (IsPictograph(c)) {
    end = i + 1;
    while (end < limit && ContinuesEmoji(text[end])) ++end;
    found = TemplateTokenKind::kEmoji;
  }
  if (end > i) *kind = found;
  return end;
}

}  // namespace fanyi
