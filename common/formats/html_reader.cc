#include "common/formats/html_reader.h"

#include <gumbo.h>

#include <cctype>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr std::size_t kNoPosition = static_cast<std::size_t>(-1);

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

// Walks the parse, adding each text to translate to the document.
class HtmlReader {
 public:
  explicit HtmlReader(MarkedDocument* document)
      : document_(*document), source_(document->source()) {}

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
    if (piece.length == 0 || piece.data < source_.data() ||
        piece.data + piece.length > source_.data() + source_.size()) {
      return kNoPosition;
    }
    return static_cast<std::size_t>(piece.data - source_.data());
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
};

}  // namespace

MarkedDocument ReadHtml(std::string html) {
  MarkedDocument document(std::move(html));
  const std::string& source = document.source();
  std::unique_ptr<GumboOutput, void (*)(GumboOutput*)> output(
      gumbo_parse_with_options(&kGumboDefaultOptions, source.data(),
                               source.size()),
      [](GumboOutput* parsed) {
        gumbo_destroy_output(&kGumboDefaultOptions, parsed);
      });
  HtmlReader(&document).Read(output->document);
  return document;
}

}  // namespace fanyi
