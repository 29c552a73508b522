#include "common/formats/html_parse_checks.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/text/utf8.h"

namespace fanyi {
namespace html_parse_checks {
namespace {

// Elements whose content the parser reads as text up to their end tag (in
// HTML content).
bool HoldsRawText(std::string_view name) {
  for (std::string_view raw : {"script", "style", "textarea", "title", "xmp",
                               "iframe", "noembed", "noframes"}) {
    if (name == raw) return true;
  }
  return false;
}

// Elements that never hold others of their kind on the parser's stack:
// void elements, those it merges (html, head, body), and those it closes
// when another of their kind, or a block, starts (p, li, td, a, h1, ...).
bool StaysShallow(std::string_view name) {
  for (std::string_view shallow :
       {"area",  "base",   "basefont", "bgsound",  "br",      "col",
        "embed", "frame",  "hr",       "img",      "input",   "keygen",
        "link",  "meta",   "param",    "source",   "track",   "wbr",
        "html",  "head",   "body",     "p",        "li",      "dt",
        "dd",    "option", "optgroup", "tr",       "td",      "th",
        "tbody", "thead",  "tfoot",    "colgroup", "caption", "rb",
        "rt",    "rtc",    "rp",       "a",        "nobr",    "button",
        "form",  "select", "h1",       "h2",       "h3",      "h4",
        "h5",    "h6"}) {
    if (name == shallow) return true;
  }
  return false;
}

// HTML elements that end SVG or MathML content they appear in.
bool LeavesForeignContent(std::string_view name) {
  for (std::string_view html :
       {"b",      "big",    "blockquote", "body",    "br",    "center", "code",
        "dd",     "div",    "dl",         "dt",      "em",    "embed",  "h1",
        "h2",     "h3",     "h4",         "h5",      "h6",    "head",   "hr",
        "i",      "img",    "li",         "listing", "menu",  "meta",   "nobr",
        "ol",     "p",      "pre",        "ruby",    "s",     "small",  "span",
        "strong", "strike", "sub",        "sup",     "table", "tt",     "u",
        "ul",     "var"}) {
    if (name == html) return true;
  }
  return false;
}

// SVG and MathML elements whose content is HTML again.
bool HoldsHtml(std::string_view name) {
  for (std::string_view point : {"foreignobject", "desc", "title", "mi", "mo",
                                 "mn", "ms", "mtext", "annotation-xml"}) {
    if (name == point) return true;
  }
  return false;
}

// Where the end tag of raw text element `name` begins in `html` from `at`
// on (any letter case), or npos.
std::size_t RawTextEnd(std::string_view html, std::size_t at,
                       std::string_view name) {
  for (at = html.find("</", at); at != std::string_view::npos;
       at = html.find("</", at + 2)) {
    std::size_t k = 0;
    while (k < name.size() && at + 2 + k < html.size() &&
           std::tolower(static_cast<unsigned char>(html[at + 2 + k])) ==
               name[k]) {
      ++k;
    }
    if (k == name.size()) return at;
  }
  return std::string_view::npos;
}

// Where the comment whose "<!--" ends at `at` ends ("-->", "--!>", or at
// once for "<!-->" and "<!--->"), past it; npos when it runs to the end.
std::size_t CommentEnd(std::string_view html, std::size_t at) {
  if (html.compare(at, 1, ">") == 0) return at + 1;
  if (html.compare(at, 2, "->") == 0) return at + 2;
  for (at = html.find("--", at); at != std::string_view::npos;
       at = html.find("--", at + 1)) {
    if (html.compare(at + 2, 1, ">") == 0) return at + 3;
    if (html.compare(at + 2, 2, "!>") == 0) return at + 4;
  }
  return std::string_view::npos;
}

// Attributes a tag may have, at most, as the pass before the parse counts
// them (roughly: "a = b" counts twice). Gumbo looks for each attribute
// among those before it in its tag: 20,000 on one tag took seconds, a cost
// the parse's CPU budget bounds only by time, which depends on the host.
// Real pages have tens.
constexpr int kMaxTagAttributes = 512;

// The value of the hexadecimal (or, with !hex, decimal) digit `c`, or -1.
int DigitValue(char c, bool hex) {
  if (c >= '0' && c <= '9') return c - '0';
  if (!hex) return -1;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string PrepassRefusal(std::string_view html, int max_depth) {
  constexpr std::size_t kNone = std::string_view::npos;
  struct Open {
    std::string name;
    bool foreign = false;  // Its content is SVG or MathML.
  };
  std::vector<Open> open;  // Innermost last.
  std::size_t at = 0;
  while ((at = html.find('<', at)) != kNone && ++at < html.size()) {
    if (html.compare(at, 3, "!--") == 0) {
      at = CommentEnd(html, at + 3);
      if (at == kNone) break;
      continue;
    }
    const bool closing = html[at] == '/';
    if (closing) ++at;
    if (at < html.size() && (html[at] == '!' || html[at] == '?' || closing) &&
        !std::isalpha(static_cast<unsigned char>(html[at]))) {
      at = html.find('>', at);  // A doctype or a bogus comment.
      if (at == kNone) break;
      continue;
    }
    if (at >= html.size() ||
        !std::isalpha(static_cast<unsigned char>(html[at]))) {
      continue;  // A '<' in text.
    }
    std::string name;
    for (; at < html.size() && !IsAsciiSpace(html[at]) && html[at] != '/' &&
           html[at] != '>';
         ++at) {
      if (name.size() < 32) {
        name.push_back(static_cast<char>(
            std::tolower(static_cast<unsigned char>(html[at]))));
      }
    }
    // The attributes, to the '>' outside quoted values. A quote that is
    // never closed is read as part of a name (no value), as a parser
    // reading on would see the rest.
    bool self_closing = false;
    int attributes = 0;
    for (; at < html.size() && html[at] != '>'; ++at) {
      self_closing = html[at] == '/';
      // An attribute starts after a space (or the name, or a '/').
      if (!IsAsciiSpace(html[at]) && html[at] != '/' && html[at] != '=' &&
          (IsAsciiSpace(html[at - 1]) || html[at - 1] == '/') &&
          ++attributes > kMaxTagAttributes) {
        return "HTML: a tag has more than " +
               std::to_string(kMaxTagAttributes) +
               " attributes; the limit is " + std::to_string(kMaxTagAttributes);
      }
      if (html[at] != '=') continue;
      std::size_t value = at + 1;
      while (value < html.size() && IsAsciiSpace(html[value])) ++value;
      if (value < html.size() && (html[value] == '"' || html[value] == '\'')) {
        const std::size_t quote_end = html.find(html[value], value + 1);
        if (quote_end != kNone) at = quote_end;
      }
    }
    if (at >= html.size()) break;  // Cut short: the parser drops it.
    ++at;
    if (closing) {
      for (std::size_t k = open.size(); k-- > 0;) {
        if (open[k].name != name) continue;
        open.resize(k);
        break;
      }
      continue;
    }
    bool foreign = !open.empty() && open.back().foreign;
    if (foreign && LeavesForeignContent(name)) {
      while (!open.empty() && open.back().foreign) open.pop_back();
      foreign = false;
    }
    if (foreign) {
      if (self_closing) continue;
      const bool stays_foreign = !HoldsHtml(name);
      open.push_back({std::move(name), stays_foreign});
    } else {
      if (HoldsRawText(name)) {
        at = RawTextEnd(html, at, name);
        if (at == kNone) break;
        continue;
      }
      if (name == "plaintext") break;  // The rest is text.
      if (StaysShallow(name)) continue;
      const bool starts_foreign = name == "svg" || name == "math";
      open.push_back({std::move(name), starts_foreign});
    }
    if (open.size() > static_cast<std::size_t>(max_depth)) {
      return "HTML nests elements more than " + std::to_string(max_depth) +
             " deep; the limit is " + std::to_string(max_depth);
    }
  }
  return "";
}

int TreeDepth(const GumboNode* root) {
  int deepest = 0;
  std::vector<std::pair<const GumboNode*, int>> pending = {{root, 0}};
  while (!pending.empty()) {
    const auto [node, depth] = pending.back();
    pending.pop_back();
    const GumboVector* children = nullptr;
    if (node->type == GUMBO_NODE_DOCUMENT) {
      children = &node->v.document.children;
    } else if (node->type == GUMBO_NODE_ELEMENT ||
               node->type == GUMBO_NODE_TEMPLATE) {
      children = &node->v.element.children;
      deepest = std::max(deepest, depth);
    }
    if (children == nullptr) continue;
    for (unsigned i = 0; i < children->length; ++i) {
      pending.emplace_back(static_cast<const GumboNode*>(children->data[i]),
                           depth + 1);
    }
  }
  return deepest;
}

std::string WithoutOverflowingReferences(const std::string& html) {
  std::string rewritten;
  std::size_t i = 0;
  while ((i = html.find("&#", i)) != std::string::npos) {
    i += 2;
    const bool hex = i < html.size() && (html[i] == 'x' || html[i] == 'X');
    if (hex) ++i;
    const std::size_t digits = i;
    std::uint32_t value = 0;  // Stops growing past U+10FFFF.
    for (int digit; i < html.size() && (digit = DigitValue(html[i], hex)) >= 0;
         ++i) {
      value =
          std::min<std::uint32_t>(value * (hex ? 16 : 10) + digit, 0x110000);
    }
    if (value <= 0x10FFFF) continue;
    // At least 6 hexadecimal or 7 decimal digits: room for the new ones.
    const std::string replacement = hex ? "FFFD" : "65533";
    if (rewritten.empty()) rewritten = html;
    const std::size_t length = i - digits;
    rewritten.replace(
        digits, length,
        std::string(length - replacement.size(), '0') + replacement);
  }
  return rewritten;
}

}  // namespace html_parse_checks
}  // namespace fanyi
