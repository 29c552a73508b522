#include "common/formats/word_reader.h"

#include <string_view>
#include <utility>
#include <vector>

#include "common/formats/xml_tree.h"
#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

// The local name of a WordprocessingML element (transitional or strict),
// or empty for any other node.
std::string_view WordName(const XmlTree::Node& node) {
  static constexpr std::string_view kNamespaces[] = {
      "http://schemas.openxmlformats.org/wordprocessingml/2006/main ",
      "http://purl.oclc.org/ooxml/wordprocessingml/main "};
  const std::string_view name = node.name;
  for (std::string_view prefix : kNamespaces) {
    if (name.substr(0, prefix.size()) == prefix) {
      return name.substr(prefix.size());
    }
  }
  return {};
}

// One child of a paragraph, as its text sees it.
struct Item {
  enum Kind {
    kWords,      // A run of text alone (w:r with w:rPr and w:t).
    kContainer,  // Runs inside an element (w:hyperlink, w:ins, ...).
    kDropped,    // A spell-check mark.
    kKept        // Anything else: kept as it is, a marker in the text.
  };
  Kind kind = kKept;
  int node = 0;
  std::string_view properties;  // kWords: the run's w:rPr, as written.
  // kWords: what of its properties shows (w:rPr's elements as written, less
  // the proofing ones, w:lang and w:noProof, which Word sets on runs that
  // look alike): runs alike in this are one formatting.
  std::string formatting;
  std::u32string words;         // kWords: its text.
  std::size_t words_begin = 0;  // kWords: its w:t content, first to last.
  std::size_t words_end = 0;
};

// Walks a WordprocessingML part, adding each paragraph's text.
class WordReader {
 public:
  WordReader(const XmlTree& tree, MarkedDocument* document)
      : tree_(tree), document_(*document), source_(document->source()) {}

  // Adds the paragraphs inside node `index` to `region`.
  void Walk(int index, int region) {
    for (int child : tree_.node(index).children) {
      if (tree_.IsText(child)) continue;
      if (WordName(tree_.node(child)) == "p") {
        AddRuns(Items(child), region);
      } else {
        Walk(child, region);
      }
    }
  }

 private:
  // The children of a paragraph or a container of runs, classified.
  std::vector<Item> Items(int index) const {
    std::vector<Item> items;
    for (int child : tree_.node(index).children) {
      if (tree_.IsText(child)) continue;
      const std::string_view name = WordName(tree_.node(child));
      if (name == "pPr" || name == "rPr") continue;
      Item item;
      item.node = child;
      if (name == "r") {
        item = Run(child);
      } else if (name == "hyperlink" || name == "smartTag" || name == "ins" ||
                 name == "fldSimple" || name == "customXml") {
        item.kind = Item::kContainer;
      } else if (name == "proofErr") {
        item.kind = Item::kDropped;
      }
      items.push_back(std::move(item));
    }
    return items;
  }

  // A run: words when it holds only its properties and text.
  Item Run(int index) const {
    Item item;
    item.node = index;
    std::size_t texts = 0;
    for (int child : tree_.node(index).children) {
      if (tree_.IsText(child)) continue;
      const XmlTree::Node& node = tree_.node(child);
      const std::string_view name = WordName(node);
      if (name == "rPr") {
        item.properties = source_.substr(node.begin, node.end - node.begin);
        for (int property : node.children) {
          const XmlTree::Node& element = tree_.node(property);
          const std::string_view kind = WordName(element);
          if (tree_.IsText(property) || kind == "lang" || kind == "noProof") {
            continue;
          }
          item.formatting +=
              source_.substr(element.begin, element.end - element.begin);
        }
      } else if (name == "t") {
        if (texts++ == 0) item.words_begin = node.open_end;
        item.words_end = node.close_begin;
        item.words += DecodeWords(tree_.TextContent(child));
      } else if (name != "lastRenderedPageBreak") {
        return Item{Item::kKept, index};  // A tab, a break, a drawing, ...
      }
    }
    item.kind = texts > 0 ? Item::kWords : Item::kKept;
    return item;
  }

  // Adds a paragraph's (or a container's) items to `region` as one text,
  // or, when they have no words or too many markers, each on its own.
  void AddRuns(const std::vector<Item>& items, int region) {
    // The formatting most of the words have is the text's own.
    std::string_view base;
    std::size_t most = 0;
    for (const Item& item : items) {
      if (item.kind == Item::kWords && item.words.size() > most) {
        most = item.words.size();
        base = item.formatting;
      }
    }
    // Kept items at either end stay where they are.
    std::size_t first = 0;
    std::size_t last = items.size();
    while (first < last && items[first].kind >= Item::kDropped) ++first;
    while (last > first && items[last - 1].kind >= Item::kDropped) --last;
    std::u32string text;
    std::vector<const Item*> marked;
    for (std::size_t i = first; i < last; ++i) {
      const Item& item = items[i];
      if (item.kind == Item::kDropped) continue;
      if (item.kind == Item::kWords && item.formatting == base) {
        text += item.words;
        continue;
      }
      text.push_back(InlineMarker(static_cast<int>(marked.size())));
      marked.push_back(&item);
    }
    text = CollapseSpaces(text);
    if (most == 0 || marked.size() > kMaxInlineMarkers || !HasLetters(text)) {
      for (const Item& item : items) AddAlone(item, region);
      return;
    }
    // Items before the text first, so that edits stay in source order.
    for (std::size_t i = 0; i < first; ++i) AddAlone(items[i], region);
    std::vector<int> markers;
    for (const Item* item : marked) {
      const XmlTree::Node& node = tree_.node(item->node);
      markers.push_back(document_.AddRegion(node.begin, node.end));
    }
    // The words between markers become runs of the base formatting (the
    // properties of the first run in it, as written), named with the prefix
    // the part gives Word's namespace.
    const Item& base_item = BaseRun(items, base);
    const XmlTree::Node& base_run = tree_.node(base_item.node);
    const std::string_view tag = source_.substr(
        base_run.begin + 1, base_run.open_end - base_run.begin - 1);
    const std::string_view name = tag.substr(0, tag.find_first_of(" \t\r\n/>"));
    const std::string_view prefix = name.substr(0, name.find(':') + 1);
    TextWriting writing;
    writing.words_before = "<" + std::string(prefix) + "r>" +
                           std::string(base_item.properties) + "<" +
                           std::string(prefix) + "t xml:space=\"preserve\">";
    writing.words_after =
        "</" + std::string(prefix) + "t></" + std::string(prefix) + "r>";
    document_.AddText(region, tree_.node(items[first].node).begin,
                      tree_.node(items[last - 1].node).end, EncodeUtf8(text),
                      markers, std::move(writing));
    for (std::size_t k = 0; k < marked.size(); ++k) {
      AddAlone(*marked[k], markers[k]);
    }
    for (std::size_t i = last; i < items.size(); ++i) {
      AddAlone(items[i], region);
    }
  }

  // The first run in `base` formatting (one is: `base` is a run's).
  static const Item& BaseRun(const std::vector<Item>& items,
                             std::string_view base) {
    for (const Item& item : items) {
      if (item.kind == Item::kWords && item.formatting == base) return item;
    }
    return items.front();
  }

  // Adds an item's words to `region` on their own: a run's text in place,
  // a container's runs as a text, and paragraphs inside a kept item (a text
  // box) each as theirs.
  void AddAlone(const Item& item, int region) {
    switch (item.kind) {
      case Item::kWords: {
        const std::u32string text = CollapseSpaces(item.words);
        if (HasLetters(text)) {
          document_.AddText(region, item.words_begin, item.words_end,
                            EncodeUtf8(text), {});
        }
        break;
      }
      case Item::kContainer:
        AddRuns(Items(item.node), region);
        break;
      case Item::kKept:
        Walk(item.node, region);
        break;
      case Item::kDropped:
        break;
    }
  }

  const XmlTree& tree_;
  MarkedDocument& document_;
  const std::string_view source_;
};

}  // namespace

MarkedDocument ReadWordXml(std::string xml, int max_depth) {
  MarkedDocument document(std::move(xml));
  const XmlTree tree(document.source(), max_depth);
  WordReader(tree, &document).Walk(tree.root(), 0);
  return document;
}

}  // namespace fanyi
