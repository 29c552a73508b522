#include "common/formats/html_reader.h"

#include <gumbo.h>

#include <cstddef>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "common/formats/gumbo_memory.h"
#include "common/formats/html_elements.h"
#include "common/formats/html_parse_checks.h"
#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr std::size_t kNoPosition = static_cast<std::size_t>(-1);

// What Gumbo may hold while it parses a document of n bytes: kParseFloor
// plus kParseBytesPerByte * n, each block counted with
// GumboMemory::kBlockOverhead for malloc's header and its entry in
// GumboMemory's table. Real pages take 6 to 16 bytes a byte; markup made to
// multiply nodes (formatting elements reopened in every block) is refused when
// it reaches the bound.
constexpr std::size_t kParseFloor = std::size_t{16} << 20;
constexpr std::size_t kParseBytesPerByte = 48;
// The CPU time Gumbo may take on a document of n MiB: kParseSecondsFloor
// plus kParseSecondsPerMiB * n. Real pages parse at tens of MiB a second;
// Gumbo has steps whose cost grows with the square of what a document
// repeats (the open elements, a tag's attributes, the active formatting
// elements), and markup made for them is refused when it reaches the bound.
constexpr double kParseSecondsFloor = 0.5;
constexpr double kParseSecondsPerMiB = 1.0;

// Walks the parse, adding each text to translate to the document.
class HtmlReader {
 public:
  // `parsed` is what Gumbo parsed: the document's source, or a copy of the
  // same length (WithoutOverflowingReferences in html_parse_checks.h).
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
          (node->type != GUMBO_NODE_COMMENT && html_elements::HoldsTag(text))) {
        return {kNoPosition, kNoPosition};
      }
      return {begin, begin + text.length};
    }
    const GumboElement& element = node->v.element;
    const std::size_t begin = Offset(element.original_tag);
    if (begin == kNoPosition) return {kNoPosition, kNoPosition};
    if (html_elements::IsVoid(element.tag))
      return {begin, begin + element.original_tag.length};
    const std::size_t end_tag = Offset(element.original_end_tag);
    // The parser may record as an element's end tag the one that closed it
    // implicitly (</p> closing an <a>): only its own counts.
    if (end_tag == kNoPosition || end_tag < begin ||
        !html_elements::ClosesElement(element.original_end_tag, element.tag)) {
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
    if (!html_elements::IsInline(element.tag) ||
        Extent(node).first == kNoPosition ||
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
    if (html_elements::KeepsContent(element.tag) ||
        html_elements::MarkedNotToTranslate(element)) {
      return;
    }
    if (html_elements::IsInline(element.tag) &&
        !html_elements::Translatable(CollapseSpaces(TextContent(node)))) {
      return;
    }
    Children(node, region);
  }

  // The alt, title, placeholder and aria-label values, each a text.
  void Attributes(const GumboElement& element, int region) {
    for (const char* name : {"alt", "title", "placeholder", "aria-label"}) {
      const GumboAttribute* attribute = html_elements::Attribute(element, name);
      if (attribute == nullptr) continue;
      const std::size_t at = Offset(attribute->original_value);
      if (at == kNoPosition) continue;
      const std::u32string value =
          CollapseSpaces(DecodeWords(attribute->value));
      if (!html_elements::Translatable(value)) continue;
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
    if (!html_elements::Translatable(text)) {
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
  if (const std::string refusal =
          html_parse_checks::PrepassRefusal(source, max_depth);
      !refusal.empty()) {
    throw std::invalid_argument(refusal);
  }
  GumboMemory memory(
      kParseFloor + kParseBytesPerByte * source.size(),
      kParseSecondsFloor +
          kParseSecondsPerMiB * static_cast<double>(source.size()) / (1 << 20));
  const std::string rewritten =
      html_parse_checks::WithoutOverflowingReferences(source);
  const std::string_view parsed =
      rewritten.empty() ? std::string_view(source) : rewritten;
  GumboOptions options = kGumboDefaultOptions;
  options.allocator = GumboMemory::Allocate;
  options.deallocator = GumboMemory::Deallocate;
  options.userdata = &memory;
  // Gumbo records each parse error with a copy of the open elements: on
  // unclosed tags, memory quadratic in the input. The reader needs none.
  options.max_errors = 0;
  // Freed with `memory`, never by gumbo_destroy_output (see GumboMemory).
  const GumboOutput* output =
      gumbo_parse_with_options(&options, parsed.data(), parsed.size());
  if (const int depth = html_parse_checks::TreeDepth(output->document);
      depth > max_depth) {
    throw std::invalid_argument("HTML nests elements " + std::to_string(depth) +
                                " deep; the limit is " +
                                std::to_string(max_depth));
  }
  HtmlReader(&document, parsed).Read(output->document);
  return document;
}

}  // namespace fanyi
