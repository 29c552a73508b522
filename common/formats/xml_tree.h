#ifndef FANYI_COMMON_FORMATS_XML_TREE_H_
#define FANYI_COMMON_FORMATS_XML_TREE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fanyi {

// An XML document's elements and character data with the byte range of
// each in the source, so that a format reader can edit some of the source
// and keep the rest byte for byte. Parsed with Expat, namespaces resolved.
class XmlTree {
 public:
  // A node: an element (name set) or a stretch of character data.
  struct Node {
    // "URI local" for an element in a namespace, "local" otherwise; empty
    // for character data.
    std::string name;
    std::size_t begin = 0;        // Where its start tag, or its data, begins.
    std::size_t open_end = 0;     // After its start tag.
    std::size_t close_begin = 0;  // Where its end tag begins.
    std::size_t end = 0;          // After its end tag, or its data.
    std::string text;             // Character data, decoded (entities).
    std::vector<int> children;    // Indices of nodes, in document order.
  };

  // Parses `xml` (which must outlive the tree). Throws
  // std::invalid_argument with Expat's message and the line for XML that
  // is not well-formed, and for a document type declaration (which a
  // file format has no use for, and which could declare entities).
  explicit XmlTree(std::string_view xml);

  // The root element's index.
  int root() const { return root_; }
  const Node& node(int index) const { return nodes_[index]; }
  bool IsText(int index) const { return nodes_[index].name.empty(); }

  // The text of `index`'s character data and its descendants'.
  std::string TextContent(int index) const;

 private:
  friend struct XmlTreeBuilder;  // Expat's callbacks, in xml_tree.cc.

  std::vector<Node> nodes_;
  int root_ = -1;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_XML_TREE_H_
