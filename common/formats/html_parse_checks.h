// The checks around Gumbo's parse of an HTML document (html_reader.h) that
// keep its cost bounded and its reading right: a pass before it that
// refuses plain deep nesting and tags with too many attributes, the numeric
// references Gumbo would misread, and the depth of the tree it built.
#ifndef FANYI_COMMON_FORMATS_HTML_PARSE_CHECKS_H_
#define FANYI_COMMON_FORMATS_HTML_PARSE_CHECKS_H_

#include <gumbo.h>

#include <string>
#include <string_view>

namespace fanyi {
namespace html_parse_checks {

// Why `html` is refused before it is parsed, or "": when its elements
// would nest more than `max_depth` deep, or a tag has more than
// kMaxTagAttributes attributes, by one pass over its tags that follows
// them roughly as the HTML5 parser will: start tags open elements, an end tag
// closes its innermost open element and those inside it; comments, raw text and
// elements that stay shallow (StaysShallow) open nothing, nor, in SVG and
// MathML, tags that close themselves. A cheap first refusal for plain deep
// nesting, whose parse Gumbo makes quadratic (it looks through the open
// elements at each start tag: 40,000 nested divs took 3 s). It is no bound:
// markup can nest in ways it does not follow, which the parse's CPU time budget
// and the exact depth check after it catch. Linear: each tag is read once, and
// an end tag looks through at most max_depth open elements.
std::string PrepassRefusal(std::string_view html, int max_depth);

// The depth of the deepest element under the document node `root` (<html>
// is at 1), walked with a stack of its own.
int TreeDepth(const GumboNode* root);

// `html` with the digits of each numeric character reference above U+10FFFF
// rewritten to name U+FFFD, as HTML reads such a reference, with leading
// zeros so that every byte keeps its offset; "" when it has none. Gumbo
// sums the digits in an int that wraps: from 2^31 on it writes the low byte
// of what it summed, which may be any byte, `<` or NUL as well.
std::string WithoutOverflowingReferences(const std::string& html);

}  // namespace html_parse_checks
}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_HTML_PARSE_CHECKS_H_
