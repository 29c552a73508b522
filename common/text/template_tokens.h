// The template tokens of software strings: what a program fills in or reads
// when it prints a translated string, and so must come back exactly as
// written (a lost `%s` crashes the program that prints it).
#ifndef FANYI_COMMON_TEXT_TEMPLATE_TOKENS_H_
#define FANYI_COMMON_TEXT_TEMPLATE_TOKENS_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace fanyi {

// The kinds of template token, for counting them.
enum class TemplateTokenKind {
  kNone,    // No token starts here.
  kPrintf,  // %s, %d, %1$s, %(name)s, %-5.2f, %%, Qt's %1.
  kBraces,  // {0}, {name}, {{name}}, {count, plural, one {…} other {…}}.
  kDollar,  // ${name}, $name.
  kColon,   // :name (Laravel).
  kAccelerator,  // The & of &File (the letter after it stays a word).
  kEntity,       // &amp;, &#169;, &#x1F600; written in plain text.
  kTag,          // <0>, </0>, <0/> (react-i18next); <b>, </b>, <br/>,
                 // <a href="..."> (inline HTML elements, in plain text).
  kEscape,       // \n, \t, \r, \", \', \\ written as two characters.
  kEmoji,        // An emoji with its joiners, modifiers and selectors.
};

// The name of a kind ("printf", "braces", ...), for metrics and reports.
std::string_view TemplateTokenKindName(TemplateTokenKind kind);

// The end of the template token that starts at text[i], and its kind in
// `*kind`; `i` (and kNone) when none starts there. Looks at most
// kMaxTemplateTokenLength code points ahead, so that a scan that calls it
// at every position stays linear in the text.
std::size_t TemplateTokenEnd(const std::u32string& text, std::size_t i,
                             TemplateTokenKind* kind);

// The longest token TemplateTokenEnd finds (an ICU plural message is one
// token): longer braces are left as text.
inline constexpr std::size_t kMaxTemplateTokenLength = 256;

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_TEMPLATE_TOKENS_H_
