#include "common/formats/office_vocabulary.h"

#include <utility>

namespace fanyi {
namespace {

// The local name of `node` when it is an element in one of `namespaces`
// (each "URI "), or empty.
template <std::size_t N>
std::string_view LocalName(const XmlTree::Node& node,
                           const std::string_view (&namespaces)[N]) {
  const std::string_view name = node.name;
  for (std::string_view prefix : namespaces) {
    if (name.substr(0, prefix.size()) == prefix) {
      return name.substr(prefix.size());
    }
  }
  return {};
}

// The prefix (with its colon, or empty) of the element that starts at
// `begin` in `source`, as written.
std::string_view PrefixAt(std::string_view source, std::size_t begin) {
  const std::string_view tag = source.substr(begin + 1);
  const std::string_view name = tag.substr(0, tag.find_first_of(" \t\r\n/>"));
  return name.substr(0, name.find(':') + 1);
}

std::string_view SourceOf(std::string_view source, const XmlTree::Node& node) {
  return source.substr(node.begin, node.end - node.begin);
}

// A run (Word's w:r, DrawingML's a:r): words when it holds only its
// properties (rPr, whose formatting `formatting_of` reads) and text (t);
// kept as it is when it holds anything else (a tab, a break, a drawing).
template <std::size_t N>
RunItem ReadRun(const XmlTree& tree, std::string_view source, int index,
                const std::string_view (&namespaces)[N],
                std::string (*formatting_of)(const XmlTree&, std::string_view,
                                             const XmlTree::Node&)) {
  RunItem item;
  item.node = index;
  std::size_t texts = 0;
  for (int child : tree.node(index).children) {
    if (tree.IsText(child)) continue;
    const XmlTree::Node& node = tree.node(child);
    const std::string_view name = LocalName(node, namespaces);
    if (name == "rPr") {
      item.formatting = formatting_of(tree, source, node);
    } else if (name == "t") {
      if (texts++ == 0) item.words_begin = node.open_end;
      item.words_end = node.close_begin;
      item.words += DecodeWords(tree.TextContent(child));
    } else if (name != "lastRenderedPageBreak") {
      return RunItem{RunItem::kKept, index};
    }
  }
  item.kind = texts > 0 ? RunItem::kWords : RunItem::kKept;
  return item;
}

// How words in the formatting of run `run` (Word's w:r, DrawingML's a:r)
// are written: in new runs like it, its start tag, properties and first
// text element's start tag as written (so that namespace prefixes they
// declare stay declared), that tag given xml:space="preserve" when
// `preserve_space` and it has none.
template <std::size_t N>
TextWriting RunWriting(const XmlTree& tree, std::string_view source, int run,
                       const std::string_view (&namespaces)[N],
                       bool preserve_space) {
  const XmlTree::Node& node = tree.node(run);
  TextWriting writing;
  writing.words_before = source.substr(node.begin, node.open_end - node.begin);
  std::string text_tag;
  std::string_view text_prefix;
  for (int child : node.children) {
    const XmlTree::Node& element = tree.node(child);
    const std::string_view name = LocalName(element, namespaces);
    if (name == "rPr") writing.words_before += SourceOf(source, element);
    if (name == "t" && text_tag.empty()) {
      text_tag = source.substr(element.begin, element.open_end - element.begin);
      text_prefix = PrefixAt(source, element.begin);
    }
  }
  if (text_tag.size() >= 2 &&
      text_tag.compare(text_tag.size() - 2, 2, "/>") == 0) {
    text_tag.replace(text_tag.size() - 2, 2, ">");  // <w:t/>: now with words.
  }
  if (preserve_space && text_tag.find("xml:space") == std::string::npos) {
    text_tag.insert(text_tag.size() - 1, " xml:space=\"preserve\"");
  }
  writing.words_before += text_tag;
  writing.words_after = "</" + std::string(text_prefix) + "t></" +
                        std::string(PrefixAt(source, node.begin)) + "r>";
  return writing;
}

// Word's WordprocessingML: w:p paragraphs of w:r runs, each run's
// formatting in its w:rPr's elements and its words in w:t.
class WordVocabulary : public OfficeVocabulary {
 public:
  static constexpr std::string_view kNamespaces[] = {
      "http://schemas.openxmlformats.org/wordprocessingml/2006/main ",
      "http://purl.oclc.org/ooxml/wordprocessingml/main "};

  std::vector<RunItem> Items(const XmlTree& tree, std::string_view source,
                             int index) const override {
    std::vector<RunItem> items;
    for (int child : tree.node(index).children) {
      if (tree.IsText(child)) continue;
      const std::string_view name = LocalName(tree.node(child), kNamespaces);
      if (name == "pPr" || name == "rPr") continue;
      RunItem item;
      item.node = child;
      if (name == "r") {
        item = Run(tree, source, child);
      } else if (name == "hyperlink" || name == "smartTag" || name == "ins" ||
                 name == "fldSimple" || name == "customXml") {
        item.kind = RunItem::kContainer;
      } else if (name == "proofErr") {
        item.kind = RunItem::kDropped;
      }
      items.push_back(std::move(item));
    }
    return items;
  }

  TextWriting Writing(const XmlTree& tree, std::string_view source,
                      const RunItem& base) const override {
    return RunWriting(tree, source, base.node, kNamespaces,
                      /*preserve_space=*/true);
  }

 private:
  // A run's formatting: w:rPr's elements as written, less the proofing
  // ones (w:lang, w:noProof), which Word sets on runs that look alike.
  static std::string Formatting(const XmlTree& tree, std::string_view source,
                                const XmlTree::Node& properties) {
    std::string formatting;
    for (int property : properties.children) {
      const std::string_view kind = LocalName(tree.node(property), kNamespaces);
      if (tree.IsText(property) || kind == "lang" || kind == "noProof") {
        continue;
      }
      formatting += SourceOf(source, tree.node(property));
    }
    return formatting;
  }

  static RunItem Run(const XmlTree& tree, std::string_view source, int index) {
    return ReadRun(tree, source, index, kNamespaces, Formatting);
  }
};

// `start_tag` (an element's start tag as written) less the attributes that
// only record proofing (the language, spell-check and edit marks). Expat
// has read the tag, so it is well-formed: one pass over it.
std::string WithoutProofing(std::string_view start_tag) {
  static constexpr std::string_view kProofing[] = {
      "lang", "altLang", "dirty", "err", "noProof", "smtClean", "smtId"};
  std::size_t at = start_tag.find_first_of(" \t\r\n/>");
  std::string kept(start_tag.substr(0, at));
  while (at < start_tag.size()) {
    at = start_tag.find_first_not_of(" \t\r\n", at);
    if (at == std::string_view::npos || start_tag[at] == '/' ||
        start_tag[at] == '>') {
      break;
    }
    const std::size_t equals = start_tag.find('=', at);
    const std::size_t open = start_tag.find_first_of("\"'", equals);
    if (open == std::string_view::npos) break;
    const std::size_t close = start_tag.find(start_tag[open], open + 1);
    if (close == std::string_view::npos) break;
    std::string_view name = start_tag.substr(at, equals - at);
    name = name.substr(0, name.find_first_of(" \t\r\n"));
    name = name.substr(name.find(':') + 1);
    bool proofing = false;
    for (std::string_view each : kProofing) proofing |= name == each;
    if (!proofing) {
      kept += ' ';
      kept += start_tag.substr(at, close + 1 - at);
    }
    at = close + 1;
  }
  return kept;
}

// DrawingML's text (a .pptx's slides, notes and tables): a:p paragraphs of
// a:r runs, each run's formatting in its a:rPr's attributes and elements
// and its words in a:t; line breaks (a:br) and fields (a:fld) stand
// between runs.
class DrawingVocabulary : public OfficeVocabulary {
 public:
  static constexpr std::string_view kNamespaces[] = {
      "http://schemas.openxmlformats.org/drawingml/2006/main ",
      "http://purl.oclc.org/ooxml/drawingml/main "};

  std::vector<RunItem> Items(const XmlTree& tree, std::string_view source,
                             int index) const override {
    std::vector<RunItem> items;
    for (int child : tree.node(index).children) {
      if (tree.IsText(child)) continue;
      const std::string_view name = LocalName(tree.node(child), kNamespaces);
      if (name == "pPr") continue;
      items.push_back(name == "r" ? Run(tree, source, child)
                                  : RunItem{RunItem::kKept, child});
    }
    return items;
  }

  TextWriting Writing(const XmlTree& tree, std::string_view source,
                      const RunItem& base) const override {
    // a:t keeps its white space without xml:space, which its schema lacks.
    return RunWriting(tree, source, base.node, kNamespaces,
                      /*preserve_space=*/false);
  }

 private:
  // A run's formatting: a:rPr's attributes less the proofing ones, and
  // its elements (fill, font, hyperlink), as written.
  static std::string Formatting(const XmlTree& tree, std::string_view source,
                                const XmlTree::Node& properties) {
    std::string formatting = WithoutProofing(source.substr(
        properties.begin, properties.open_end - properties.begin));
    for (int property : properties.children) {
      if (!tree.IsText(property)) {
        formatting += SourceOf(source, tree.node(property));
      }
    }
    return formatting;
  }

  static RunItem Run(const XmlTree& tree, std::string_view source, int index) {
    return ReadRun(tree, source, index, kNamespaces, Formatting);
  }
};

// OpenDocument's text (an .odt's body, headers and footers, an .odp's
// slides and notes): text:p and text:h paragraphs whose words stand in the
// paragraph itself or in text:span elements of a style; text:s is spaces,
// text:a a link.
class OpenDocumentVocabulary : public OfficeVocabulary {
 public:
  static constexpr std::string_view kNamespaces[] = {
      "urn:oasis:names:tc:opendocument:xmlns:text:1.0 "};

  std::vector<RunItem> Items(const XmlTree& tree, std::string_view source,
                             int index) const override {
    std::vector<RunItem> items;
    for (int child : tree.node(index).children) {
      const XmlTree::Node& node = tree.node(child);
      const std::string_view name = LocalName(node, kNamespaces);
      RunItem item;
      item.node = child;
      if (tree.IsText(child) || name == "s") {
        item = Spaces(tree, child);
      } else if (name == "span") {
        item = Span(tree, source, child);
      } else if (name == "a" || name == "meta") {
        item.kind = RunItem::kContainer;
      } else if (name == "soft-page-break") {
        item.kind = RunItem::kDropped;  // Where a page ended when it was saved.
      }
      items.push_back(std::move(item));
    }
    return items;
  }

  TextWriting Writing(const XmlTree& tree, std::string_view source,
                      const RunItem& base) const override {
    TextWriting writing;
    if (base.formatting.empty()) return writing;  // The paragraph's own.
    const std::string prefix(PrefixAt(source, tree.node(base.node).begin));
    writing.words_before = base.formatting;  // The span's start tag.
    writing.words_after = "</" + prefix + "span>";
    return writing;
  }

 private:
  // Character data in the paragraph's own style, or text:s (one space
  // here: the translation lays its own spaces out).
  static RunItem Spaces(const XmlTree& tree, int index) {
    const XmlTree::Node& node = tree.node(index);
    RunItem item;
    item.kind = RunItem::kWords;
    item.node = index;
    item.words = tree.IsText(index) ? DecodeWords(node.text) : U" ";
    item.neutral =
        item.words.find_first_not_of(U" \t\r\n") == std::u32string::npos;
    item.words_begin = node.begin;
    item.words_end = node.end;
    return item;
  }

  // A span: words in its style when it holds only character data and
  // spaces; a container of other runs otherwise.
  static RunItem Span(const XmlTree& tree, std::string_view source, int index) {
    const XmlTree::Node& node = tree.node(index);
    RunItem item;
    item.node = index;
    for (int child : node.children) {
      if (!tree.IsText(child) &&
          LocalName(tree.node(child), kNamespaces) != "s") {
        item.kind = RunItem::kContainer;
        return item;
      }
      item.words += tree.IsText(child) ? DecodeWords(tree.node(child).text)
                                       : std::u32string(U" ");
    }
    if (item.words.empty()) return item;  // Kept: an empty span.
    item.kind = RunItem::kWords;
    item.formatting = source.substr(node.begin, node.open_end - node.begin);
    item.words_begin = node.open_end;
    item.words_end = node.close_begin;
    return item;
  }
};

}  // namespace

const OfficeVocabulary* OfficeVocabulary::OfParagraph(
    const XmlTree::Node& node) {
  static const WordVocabulary kWord;
  static const DrawingVocabulary kDrawing;
  static const OpenDocumentVocabulary kOpenDocument;
  if (LocalName(node, WordVocabulary::kNamespaces) == "p") return &kWord;
  if (LocalName(node, DrawingVocabulary::kNamespaces) == "p") return &kDrawing;
  const std::string_view name =
      LocalName(node, OpenDocumentVocabulary::kNamespaces);
  if (name == "p" || name == "h") return &kOpenDocument;
  return nullptr;
}

}  // namespace fanyi
