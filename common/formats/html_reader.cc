#include "common/formats/html_reader.h"

#include <gumbo.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr std::size_t kNoPosition = static_cast<std::size_t>(-1);

// What Gumbo may hold while it parses a document of n bytes: kParseFloor
// plus kParseBytesPerByte * n, each block counted with kBlockOverhead for
// malloc's header and its entry in ParseMemory's table. Real pages take 6
// to 16 bytes a byte; markup made to multiply nodes (formatting elements
// reopened in every block) is refused when it reaches the bound.
constexpr std::size_t kParseFloor = std::size_t{16} << 20;
constexpr std::size_t kParseBytesPerByte = 48;
constexpr std::size_t kBlockOverhead = 64;
// The CPU time Gumbo may take on a document of n MiB: kParseSecondsFloor
// plus kParseSecondsPerMiB * n. Real pages parse at tens of MiB a second;
// Gumbo has steps whose cost grows with the square of what a document
// repeats (the open elements, a tag's attributes, the active formatting
// elements), and markup made for them is refused when it reaches the bound.
constexpr double kParseSecondsFloor = 0.5;
constexpr double kParseSecondsPerMiB = 1.0;

// This thread's CPU time, in seconds.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) +
         1e-9 * static_cast<double>(now.tv_nsec);
}

// Gumbo's memory for one parse. Every block it holds is freed here, at the
// end, in one loop: gumbo_destroy_output would free the tree recursively,
// a call per level, which a deep enough document makes overflow the stack.
// A parse that would hold more than its memory budget, or run past its CPU
// time budget (checked every kCheckEvery allocations: every tag allocates),
// is stopped by an exception thrown from Allocate, through Gumbo's C frames
// (built with unwind tables, as Debian builds every library); what Gumbo
// held then is freed here like the rest.
class ParseMemory {
 public:
  ParseMemory(std::size_t budget, double seconds)
      : budget_(budget),
        seconds_(seconds),
        deadline_(ThreadCpuSeconds() + seconds) {}
  ParseMemory(const ParseMemory&) = delete;
  ParseMemory& operator=(const ParseMemory&) = delete;
  ~ParseMemory() {
    for (const auto& [block, size] : blocks_) std::free(block);
  }

  // GumboOptions::allocator and deallocator, with `self` as userdata.
  static void* Allocate(void* self, std::size_t size) {
    return static_cast<ParseMemory*>(self)->Take(size);
  }
  static void Deallocate(void* self, void* block) {
    static_cast<ParseMemory*>(self)->Give(block);
  }

 private:
  static constexpr int kCheckEvery = 64;

  void* Take(std::size_t size) {
    const std::size_t charged = size + kBlockOverhead;
    if (size > budget_ || charged > budget_ - held_) {
      throw std::invalid_argument(
          "HTML: parsing it would take more than " +
          std::to_string(budget_ >> 20) +
          " MiB (markup that multiplies elements); send simpler HTML");
    }
    if (++allocations_ % kCheckEvery == 0 && ThreadCpuSeconds() > deadline_) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.1f", seconds_);
      throw std::invalid_argument(
          "HTML: parsing it took more than " + std::string(seconds) +
          " s of CPU time (markup the parser reads slowly, such as elements "
          "nested deep); send simpler HTML");
    }
    void* block = std::malloc(size == 0 ? 1 : size);
    if (block == nullptr) throw std::bad_alloc();
    try {
      blocks_.emplace(block, charged);
    } catch (...) {
      std::free(block);
      throw;
    }
    held_ += charged;
    return block;
  }

  void Give(void* block) {
    const auto found = blocks_.find(block);
    if (found == blocks_.end()) return;  // free(NULL), as Gumbo may call.
    held_ -= found->second;
    std::free(block);
    blocks_.erase(found);
  }

  const std::size_t budget_;
  const double seconds_;
  const double deadline_;  // In ThreadCpuSeconds().
  std::size_t held_ = 0;
  std::uint64_t allocations_ = 0;
  std::unordered_map<void*, std::size_t> blocks_;  // Held: block -> charged.
};

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

// The depth of the deepest element under the document node `root` (<html>
// is at 1), walked with a stack of its own.
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

// Phrasing elements a run of text crosses. Others (blocks, tables, lists,
// unknown and custom elements) end it.
bool IsInline(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_A:
    case GUMBO_TAG_ABBR:
    case GUMBO_TAG_B:
    case GUMBO_TAG_BDI:
    case GUMBO_TAG_BDO:
    case GUMBO_TAG_BIG:
    case GUMBO_TAG_CITE:
    case GUMBO_TAG_CODE:
    case GUMBO_TAG_DATA:
    case GUMBO_TAG_DEL:
    case GUMBO_TAG_DFN:
    case GUMBO_TAG_EM:
    case GUMBO_TAG_FONT:
    case GUMBO_TAG_I:
    case GUMBO_TAG_IMG:
    case GUMBO_TAG_INS:
    case GUMBO_TAG_KBD:
    case GUMBO_TAG_LABEL:
    case GUMBO_TAG_MARK:
    case GUMBO_TAG_Q:
    case GUMBO_TAG_S:
    case GUMBO_TAG_SAMP:
    case GUMBO_TAG_SMALL:
    case GUMBO_TAG_SPAN:
    case GUMBO_TAG_STRIKE:
    case GUMBO_TAG_STRONG:
    case GUMBO_TAG_SUB:
    case GUMBO_TAG_SUP:
    case GUMBO_TAG_TIME:
    case GUMBO_TAG_TT:
    case GUMBO_TAG_U:
    case GUMBO_TAG_VAR:
    case GUMBO_TAG_WBR:
      return true;
    default:
      return false;
  }
}

// Elements whose content is code, script, or not text at all.
bool KeepsContent(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_CODE:
    case GUMBO_TAG_KBD:
    case GUMBO_TAG_SAMP:
    case GUMBO_TAG_VAR:
    case GUMBO_TAG_TEXTAREA:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
      return true;
    default:
      return false;
  }
}

bool IsVoid(GumboTag tag) {
  return tag == GUMBO_TAG_IMG || tag == GUMBO_TAG_WBR || tag == GUMBO_TAG_BR;
}

const GumboAttribute* Attribute(const GumboElement& element, const char* name) {
  return gumbo_get_attribute(&element.attributes, name);
}

// translate="no", or "notranslate" among the classes.
bool MarkedNotToTranslate(const GumboElement& element) {
  if (const GumboAttribute* translate = Attribute(element, "translate");
      translate != nullptr && strcasecmp(translate->value, "no") == 0) {
    return true;
  }
  const GumboAttribute* classes = Attribute(element, "class");
  if (classes == nullptr) return false;
  const std::string_view list = classes->value;
  for (std::size_t at = list.find("notranslate"); at != std::string_view::npos;
       at = list.find("notranslate", at + 1)) {
    const std::size_t end = at + std::strlen("notranslate");
    const bool starts = at == 0 || IsSpace(list[at - 1]);
    const bool ends = end == list.size() || IsSpace(list[end]);
    if (starts && ends) return true;
  }
  return false;
}

// True when `end_tag` ("</b >") is an end tag of `tag`.
bool ClosesElement(const GumboStringPiece& end_tag, GumboTag tag) {
  const std::string_view text(end_tag.data, end_tag.length);
  if (text.size() < 3 || text.substr(0, 2) != "</") return false;
  std::size_t end = 2;
  while (end < text.size() && text[end] != '>' && text[end] != '/' &&
         !std::isspace(static_cast<unsigned char>(text[end]))) {
    ++end;
  }
  const std::string name(text.substr(2, end - 2));
  return gumbo_tag_enum(name.c_str()) == tag;
}

// True when `text` holds what reads as a tag: '<' before a letter, '/',
// '!' or '?'.
bool HoldsTag(const GumboStringPiece& text) {
  for (std::size_t i = 0; i + 1 < text.length; ++i) {
    const char next = text.data[i + 1];
    if (text.data[i] == '<' &&
        (std::isalpha(static_cast<unsigned char>(next)) || next == '/' ||
         next == '!' || next == '?')) {
      return true;
    }
  }
  return false;
}

// Worth translating: a letter outside the markers, and not one word that
// is a mention, a hashtag or a URL.
bool Translatable(std::u32string_view text) {
  if (!HasLetters(text)) return false;
  bool space = false;
  for (char32_t c : text) {
    space = space || (InlineMarkerIndex(c) < 0 && IsSpace(c));
  }
  if (space) return true;
  std::u32string word;
  for (char32_t c : text) {
    if (InlineMarkerIndex(c) < 0) word.push_back(c);
  }
  if (word.front() == '@' || word.front() == '#') return false;
  return word.find(U"://") == std::u32string::npos &&
         word.compare(0, 4, U"www.") != 0;
}

// The value of the hexadecimal (or, with !hex, decimal) digit `c`, or -1.
int DigitValue(char c, bool hex) {
  if (c >= '0' && c <= '9') return c - '0';
  if (!hex) return -1;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `html` with the digits of each numeric character reference above U+10FFFF
// rewritten to name U+FFFD, as HTML reads such a reference, with leading
// zeros so that every byte keeps its offset; "" when it has none. Gumbo
// sums the digits in an int that wraps: from 2^31 on it writes the low byte
// of what it summed, which may be any byte, `<` or NUL as well.
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

// Walks the parse, adding each text to translate to the document.
class HtmlReader {
 public:
  // `parsed` is what Gumbo parsed: the document's source, or a copy of the
  // same length (WithoutOverflowingReferences).
  HtmlReader(MarkedDocument* document, std::string_view parsed)
      : document_(*document), source_(document->source()), parsed_(parsed) {}

  void Read(const GumboNode* root) { Children(root, 0); }

 private:
  // A run being gathered: consecutive sibling nodes, contiguous in the
  // source.
  struct Run {
    std::vector<const GumboNode*> nodes;
    std::size_t end = kNoPosition;  // Where the last node ends.
    int markers = 0;
  };

  // The offset of `piece` in the source, or kNoPosition for text the
  // parser made up.
  std::size_t Offset(const GumboStringPiece& piece) const {
    if (piece.length == 0 || piece.data < parsed_.data() ||
        piece.data + piece.length > parsed_.data() + parsed_.size()) {
      return kNoPosition;
    }
    return static_cast<std::size_t>(piece.data - parsed_.data());
  }

  // Where `node` begins and ends in the source; kNoPosition for either
  // when it is not one stretch of it.
  std::pair<std::size_t, std::size_t> Extent(const GumboNode* node) const {
    if (node->type != GUMBO_NODE_ELEMENT) {
      const GumboStringPiece& text = node->v.text.original_text;
      const std::size_t begin = Offset(text);
      // The parser joins the text around tags it ignores (a stray <html>
      // or </tr> in a body) into one node: its words are then not its
      // bytes, and it cannot be edited as one stretch.
      if (begin == kNoPosition ||
          (node->type != GUMBO_NODE_COMMENT && HoldsTag(text))) {
        return {kNoPosition, kNoPosition};
      }
      return {begin, begin + text.length};
    }
    const GumboElement& element = node->v.element;
    const std::size_t begin = Offset(element.original_tag);
    if (begin == kNoPosition) return {kNoPosition, kNoPosition};
    if (IsVoid(element.tag))
      return {begin, begin + element.original_tag.length};
    const std::size_t end_tag = Offset(element.original_end_tag);
    // The parser may record as an element's end tag the one that closed it
    // implicitly (</p> closing an <a>): only its own counts.
    if (end_tag == kNoPosition || end_tag < begin ||
        !ClosesElement(element.original_end_tag, element.tag)) {
      return {kNoPosition, kNoPosition};
    }
    return {begin, end_tag + element.original_end_tag.length};
  }

  // An element a run crosses as one marker: inline, with both tags in the
  // source, and only inline content.
  bool CrossedByRun(const GumboNode* node) const {
    if (node->type == GUMBO_NODE_COMMENT) {
      // One cut short by the end of the document swallows what follows it:
      // moved, it would swallow other words. Such a comment runs to the
      // end; one that ends before it was closed.
      const std::size_t end = Extent(node).second;
      return end != kNoPosition && end < source_.size();
    }
    if (node->type != GUMBO_NODE_ELEMENT) return false;
    const GumboElement& element = node->v.element;
    // One the parser made, moved or reopened (misnested formatting tags)
    // is not where its tags are in the source.
    if (!IsInline(element.tag) || Extent(node).first == kNoPosition ||
        node->parse_flags != GUMBO_INSERTION_NORMAL) {
      return false;
    }
    for (unsigned i = 0; i < element.children.length; ++i) {
      const auto* child =
          static_cast<const GumboNode*>(element.children.data[i]);
      if (child->type == GUMBO_NODE_ELEMENT && !CrossedByRun(child)) {
        return false;
      }
    }
    return true;
  }

  // The children of `parent`, in `region`: runs of text and inline
  // elements, and the other elements on their own.
  void Children(const GumboNode* parent, int region) {
    const GumboVector& children = parent->type == GUMBO_NODE_DOCUMENT
                                      ? parent->v.document.children
                                      : parent->v.element.children;
    Run run;
    for (unsigned i = 0; i < children.length; ++i) {
      const auto* child = static_cast<const GumboNode*>(children.data[i]);
      const bool text = child->type == GUMBO_NODE_TEXT ||
                        child->type == GUMBO_NODE_WHITESPACE;
      if (!text && !CrossedByRun(child)) {
        EndRun(&run, region);
        if (child->type == GUMBO_NODE_ELEMENT) Element(child, region);
        continue;
      }
      const auto [begin, end] = Extent(child);
      if (begin == kNoPosition) {
        EndRun(&run, region);
        continue;
      }
      const bool marker = !text;
      if (!run.nodes.empty() &&
          (begin != run.end || (marker && run.markers == kMaxInlineMarkers))) {
        EndRun(&run, region);
      }
      run.nodes.push_back(child);
      run.end = end;
      if (marker) ++run.markers;
    }
    EndRun(&run, region);
  }

  // An element outside a run, or inside one kept as it is: its attributes,
  // then its content unless it is kept.
  void Element(const GumboNode* node, int region) {
    const GumboElement& element = node->v.element;
    Attributes(element, region);
    if (KeepsContent(element.tag) || MarkedNotToTranslate(element)) return;
    if (IsInline(element.tag) &&
        !Translatable(CollapseSpaces(TextContent(node)))) {
      return;
    }
    Children(node, region);
  }

  // The alt, title, placeholder and aria-label values, each a text.
  void Attributes(const GumboElement& element, int region) {
    for (const char* name : {"alt", "title", "placeholder", "aria-label"}) {
      const GumboAttribute* attribute = Attribute(element, name);
      if (attribute == nullptr) continue;
      const std::size_t at = Offset(attribute->original_value);
      if (at == kNoPosition) continue;
      const std::u32string value =
          CollapseSpaces(DecodeWords(attribute->value));
      if (!Translatable(value)) continue;
      const char first = attribute->original_value.data[0];
      const std::size_t length = attribute->original_value.length;
      const bool quoted = (first == '"' || first == '\'') && length >= 2;
      document_.AddText(region, quoted ? at + 1 : at,
                        quoted ? at + length - 1 : at + length,
                        EncodeUtf8(value), {},
                        {TextEscape::kMarkupAttribute, quoted ? first : '\0'});
    }
  }

  // The decoded text of `node` and its descendants.
  std::u32string TextContent(const GumboNode* node) const {
    if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_WHITESPACE) {
      return DecodeWords(node->v.text.text);
    }
    if (node->type != GUMBO_NODE_ELEMENT) return {};
    std::u32string text;
    const GumboVector& children = node->v.element.children;
    for (unsigned i = 0; i < children.length; ++i) {
      text += TextContent(static_cast<const GumboNode*>(children.data[i]));
    }
    return text;
  }

  // Adds the run gathered so far as a text, or, with nothing to translate
  // in it, its inline elements one by one; then empties it.
  void EndRun(Run* run, int region) {
    if (run->nodes.empty()) return;
    std::u32string text;
    int marker = 0;
    for (const GumboNode* node : run->nodes) {
      if (node->type == GUMBO_NODE_ELEMENT ||
          node->type == GUMBO_NODE_COMMENT) {
        text.push_back(InlineMarker(marker++));
      } else {
        text += DecodeWords(node->v.text.text);
      }
    }
    // A marker takes the place of its element: the spacing around it is the
    // text nodes' beside it.
    text = CollapseSpaces(text);
    if (!Translatable(text)) {
      for (const GumboNode* node : run->nodes) {
        if (node->type == GUMBO_NODE_ELEMENT) Element(node, region);
      }
    } else {
      AddRun(*run, text, region);
    }
    *run = Run{};
  }

  void AddRun(const Run& run, const std::u32string& text, int region) {
    std::size_t begin = Extent(run.nodes.front()).first;
    std::size_t end = run.end;
    // Whitespace around the run stays as it is in the source.
    while (begin < end && IsAsciiSpace(source_[begin])) ++begin;
    while (end > begin && IsAsciiSpace(source_[end - 1])) --end;
    std::vector<int> markers;
    std::vector<const GumboNode*> elements;
    for (const GumboNode* node : run.nodes) {
      if (node->type == GUMBO_NODE_TEXT ||
          node->type == GUMBO_NODE_WHITESPACE) {
        continue;
      }
      const auto [node_begin, node_end] = Extent(node);
      markers.push_back(document_.AddRegion(node_begin, node_end));
      elements.push_back(node);
    }
    // The run's text before the texts inside its elements: document order.
    document_.AddText(region, begin, end, EncodeUtf8(text), markers);
    for (std::size_t k = 0; k < elements.size(); ++k) {
      if (elements[k]->type == GUMBO_NODE_ELEMENT) {
        Element(elements[k], markers[k]);
      }
    }
  }

  MarkedDocument& document_;
  const std::string& source_;
  const std::string_view parsed_;  // Gumbo's pointers point into it.
};

}  // namespace

MarkedDocument ReadHtml(std::string html, int max_depth) {
  MarkedDocument document(std::move(html));
  const std::string& source = document.source();
  if (const std::string refusal = PrepassRefusal(source, max_depth);
      !refusal.empty()) {
    throw std::invalid_argument(refusal);
  }
  ParseMemory memory(
      kParseFloor + kParseBytesPerByte * source.size(),
      kParseSecondsFloor +
          kParseSecondsPerMiB * static_cast<double>(source.size()) / (1 << 20));
  const std::string rewritten = WithoutOverflowingReferences(source);
  const std::string_view parsed =
      rewritten.empty() ? std::string_view(source) : rewritten;
  GumboOptions options = kGumboDefaultOptions;
  options.allocator = ParseMemory::Allocate;
  options.deallocator = ParseMemory::Deallocate;
  options.userdata = &memory;
  // Gumbo records each parse error with a copy of the open elements: on
  // unclosed tags, memory quadratic in the input. The reader needs none.
  options.max_errors = 0;
  // Freed with `memory`, never by gumbo_destroy_output (see ParseMemory).
  const GumboOutput* output =
      gumbo_parse_with_options(&options, parsed.data(), parsed.size());
  if (const int depth = TreeDepth(output->document); depth > max_depth) {
    throw std::invalid_argument("HTML nests elements " + std::to_string(depth) +
                                " deep; the limit is " +
                                std::to_string(max_depth));
  }
  HtmlReader(&document, parsed).Read(output->document);
  return document;
}

}  // namespace fanyi
