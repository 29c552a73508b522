#include "common/formats/office_xml_reader.h"

#include <string_view>
#include <utility>
#include <vector>

#include "common/formats/office_vocabulary.h"
#include "common/formats/xml_tree.h"
#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

// Walks an office document's XML part, adding each paragraph's text.
class OfficeXmlReader {
 public:
  OfficeXmlReader(const XmlTree& tree, MarkedDocument* document)
      : tree_(tree), document_(*document), source_(document->source()) {}

  // Adds the paragraphs inside node `index` to `region`. Its depth is the
  // tree's, which XmlTree bounds.
  void Walk(int index, int region) {
    for (int child : tree_.node(index).children) {
      if (tree_.IsText(child)) continue;
      const OfficeVocabulary* vocabulary =
          OfficeVocabulary::OfParagraph(tree_.node(child));
      if (vocabulary != nullptr) {
        AddRuns(*vocabulary, vocabulary->Items(tree_, source_, child), region);
      } else {
        Walk(child, region);
      }
    }
  }

 private:
  // Adds a paragraph's (or a container's) items to `region` as one text,
  // or, when they have no words or too many markers, each on its own.
  void AddRuns(const OfficeVocabulary& vocabulary,
               const std::vector<RunItem>& items, int region) {
    // The formatting of the longest words is the text's own, written as
    // its first item in it is.
    const RunItem* base = nullptr;
    for (const RunItem& item : items) {
      if (item.kind == RunItem::kWords && !item.neutral &&
          (base == nullptr || item.words.size() > base->words.size())) {
        base = &item;
      }
    }
    for (const RunItem& item : items) {
      if (base != nullptr && item.kind == RunItem::kWords && !item.neutral &&
          item.formatting == base->formatting) {
        base = &item;
        break;
      }
    }
    // Kept items at either end stay where they are.
    std::size_t first = 0;
    std::size_t last = items.size();
    while (first < last && items[first].kind >= RunItem::kDropped) ++first;
    while (last > first && items[last - 1].kind >= RunItem::kDropped) --last;
    std::u32string text;
    std::vector<const RunItem*> marked;
    for (std::size_t i = first; i < last && base != nullptr; ++i) {
      const RunItem& item = items[i];
      if (item.kind == RunItem::kDropped) continue;
      if (item.kind == RunItem::kWords &&
          (item.neutral || item.formatting == base->formatting)) {
        text += item.words;
        continue;
      }
      text.push_back(InlineMarker(static_cast<int>(marked.size())));
      marked.push_back(&item);
    }
    text = CollapseSpaces(text);
    if (base == nullptr || marked.size() > kMaxInlineMarkers ||
        !HasLetters(text)) {
      for (const RunItem& item : items) AddAlone(vocabulary, item, region);
      return;
    }
    // Items before the text first, so that edits stay in source order.
    for (std::size_t i = 0; i < first; ++i) {
      AddAlone(vocabulary, items[i], region);
    }
    std::vector<int> markers;
    for (const RunItem* item : marked) {
      const XmlTree::Node& node = tree_.node(item->node);
      markers.push_back(document_.AddRegion(node.begin, node.end));
    }
    // The words between markers are written in the base formatting.
    document_.AddText(region, tree_.node(items[first].node).begin,
                      tree_.node(items[last - 1].node).end, EncodeUtf8(text),
                      markers, vocabulary.Writing(tree_, source_, *base));
    for (std::size_t k = 0; k < marked.size(); ++k) {
      AddAlone(vocabulary, *marked[k], markers[k]);
    }
    for (std::size_t i = last; i < items.size(); ++i) {
      AddAlone(vocabulary, items[i], region);
    }
  }

  // Adds an item's words to `region` on their own: a run's text in place,
  // a container's runs as a text, and paragraphs inside a kept item (a text
  // box, a note) each as theirs.
  void AddAlone(const OfficeVocabulary& vocabulary, const RunItem& item,
                int region) {
    switch (item.kind) {
      case RunItem::kWords: {
        const std::u32string text = CollapseSpaces(item.words);
        if (HasLetters(text)) {
          document_.AddText(region, item.words_begin, item.words_end,
                            EncodeUtf8(text), {});
        }
        break;
      }
      case RunItem::kContainer:
        AddRuns(vocabulary, vocabulary.Items(tree_, source_, item.node),
                region);
        break;
      case RunItem::kKept:
        Walk(item.node, region);
        break;
      case RunItem::kDropped:
        break;
    }
  }

  const XmlTree& tree_;
  MarkedDocument& document_;
  const std::string_view source_;
};

}  // namespace

MarkedDocument ReadOfficeXml(std::string xml, int max_depth) {
  MarkedDocument document(std::move(xml));
  const XmlTree tree(document.source(), max_depth);
  OfficeXmlReader(tree, &document).Walk(tree.root(), 0);
  return document;
}

}  // namespace fanyi
