#ifndef FANYI_COMMON_FORMATS_XML_TREE_H_
#define FANYI_COMMON_FORMATS_XML_TREE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/formats/marked_document.h"

namespace fanyi {

// An XML document's elements and character data with the byte range of
// each in the source, so that a format reader can edit some of the source
// and keep the rest byte for byte. Parsed with Expat, namespaces resolved.
class XmlTree {
 public:
  // A node: an element (name set) or a stretch of character data.
  struct Node {
    // "URI local" for an element in a namespace, "local" otherwise; empty
    // for character data. Each distinct name is held once, by the tree.
    std::string_view name;
    std::size_t begin = 0;        // Where its start tag, or its data, begins.
    std::size_t open_end = 0;     // After its start tag.
    std::size_t close_begin = 0;  // Where its end tag begins.
    std::size_t end = 0;          // After its end tag, or its data.
    std::string text;             // Character data, decoded (entities).
    std::vector<int> children;    // Indices of nodes, in document order.
  };

  // The most nodes (elements and stretches of data) a tree holds: about
  // 100 bytes each, so a tree takes at most some 50 MiB besides its text.
  // Word writes 10 to 25 bytes of XML a node: a part of up to 5 to 12 MB.
  static constexpr std::size_t kMaxNodes = std::size_t{1} << 19;
  // The longest element name, its namespace URI included: real formats'
  // URIs take under 100 bytes, and Expat builds the name anew for each
  // element.
  static constexpr std::size_t kMaxNameBytes = 1024;

  // Parses `xml` (which must outlive the tree). Throws
  // std::invalid_argument with Expat's message and the line for XML that
  // is not well-formed, for a document type declaration (which a file
  // format has no use for, and which could declare entities), and, naming
  // the limit, for elements nested more than `max_depth` deep, more than
  // kMaxNodes nodes, a name longer than kMaxNameBytes, or a parse that
  // would make Expat hold more than 16 MiB plus twice the document.
  explicit XmlTree(std::string_view xml,
                   int max_depth = kDefaultMaxDocumentDepth);
  XmlTree(const XmlTree&) = delete;
  XmlTree& operator=(const XmlTree&) = delete;

  // The root element's index.
  int root() const { return root_; }
  const Node& node(int index) const { return nodes_[index]; }
  bool IsText(int index) const { return nodes_[index].name.empty(); }

  // The text of `index`'s character data and its descendants'.
  std::string TextContent(int index) const;

 private:
  friend struct XmlTreeBuilder;  // Expat's callbacks, in xml_tree.cc.

  std::vector<Node> nodes_;
  std::unordered_set<std::string> names_;  // What the nodes' names view.
  int root_ = -1;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_XML_TREE_H_
