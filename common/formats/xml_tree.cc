#include "common/formats/xml_tree.h"

#include <expat.h>

#include <memory>
#include <stdexcept>

namespace fanyi {

// Expat's callbacks: each event's byte range is where Expat says the event
// is in the buffer.
struct XmlTreeBuilder {
  XmlTree* tree = nullptr;
  XML_Parser parser = nullptr;
  std::vector<int> open;  // Elements not yet closed, innermost last.
  bool doctype = false;

  std::size_t Offset() const {
    return static_cast<std::size_t>(XML_GetCurrentByteIndex(parser));
  }
  std::size_t Length() const {
    return static_cast<std::size_t>(XML_GetCurrentByteCount(parser));
  }

  int Add(XmlTree::Node node) {
    tree->nodes_.push_back(std::move(node));
    const int index = static_cast<int>(tree->nodes_.size()) - 1;
    if (!open.empty()) tree->nodes_[open.back()].children.push_back(index);
    return index;
  }

  static void OnStart(void* data, const XML_Char* name, const XML_Char**) {
    auto* self = static_cast<XmlTreeBuilder*>(data);
    XmlTree::Node node;
    node.name = name;
    node.begin = self->Offset();
    node.open_end = node.begin + self->Length();
    const int index = self->Add(std::move(node));
    if (self->open.empty()) self->tree->root_ = index;
    self->open.push_back(index);
  }

  static void OnEnd(void* data, const XML_Char*) {
    auto* self = static_cast<XmlTreeBuilder*>(data);
    XmlTree::Node& node = self->tree->nodes_[self->open.back()];
    // An empty-element tag (<w:b/>) ends where it starts: no end tag.
    const std::size_t length = self->Length();
    node.close_begin = length == 0 ? node.open_end : self->Offset();
    node.end = node.close_begin + length;
    self->open.pop_back();
  }

  static void OnText(void* data, const XML_Char* text, int length) {
    auto* self = static_cast<XmlTreeBuilder*>(data);
    if (self->open.empty()) return;
    const std::size_t begin = self->Offset();
    const std::size_t end = begin + self->Length();
    std::vector<int>& siblings = self->tree->nodes_[self->open.back()].children;
    // Expat hands data over in pieces (an entity is a piece of its own):
    // pieces that touch are one node.
    if (!siblings.empty() && self->tree->IsText(siblings.back()) &&
        self->tree->nodes_[siblings.back()].end == begin) {
      XmlTree::Node& last = self->tree->nodes_[siblings.back()];
      last.text.append(text, static_cast<std::size_t>(length));
      last.end = end;
      return;
    }
    XmlTree::Node node;
    node.begin = begin;
    node.open_end = node.close_begin = begin;
    node.end = end;
    node.text.assign(text, static_cast<std::size_t>(length));
    self->Add(std::move(node));
  }

  static void OnDoctype(void* data, const XML_Char*, const XML_Char*,
                        const XML_Char*, int) {
    auto* self = static_cast<XmlTreeBuilder*>(data);
    self->doctype = true;
    XML_StopParser(self->parser, XML_FALSE);
  }
};

XmlTree::XmlTree(std::string_view xml) {
  if (xml.size() > static_cast<std::size_t>(INT32_MAX)) {
    throw std::invalid_argument("XML document too large");
  }
  std::unique_ptr<XML_ParserStruct, void (*)(XML_Parser)> parser(
      XML_ParserCreateNS("UTF-8", ' '), XML_ParserFree);
  if (parser == nullptr) throw std::bad_alloc();
  XmlTreeBuilder builder;
  builder.tree = this;
  builder.parser = parser.get();
  XML_SetUserData(parser.get(), &builder);
  XML_SetElementHandler(parser.get(), XmlTreeBuilder::OnStart,
                        XmlTreeBuilder::OnEnd);
  XML_SetCharacterDataHandler(parser.get(), XmlTreeBuilder::OnText);
  XML_SetStartDoctypeDeclHandler(parser.get(), XmlTreeBuilder::OnDoctype);
  const XML_Status status = XML_Parse(parser.get(), xml.data(),
                                      static_cast<int>(xml.size()), XML_TRUE);
  if (builder.doctype) {
    throw std::invalid_argument("XML has a document type declaration");
  }
  if (status != XML_STATUS_OK) {
    throw std::invalid_argument(
        std::string("XML is not well-formed: ") +
        XML_ErrorString(XML_GetErrorCode(parser.get())) + " at line " +
        std::to_string(XML_GetCurrentLineNumber(parser.get())));
  }
  if (root_ < 0) throw std::invalid_argument("XML has no root element");
}

std::string XmlTree::TextContent(int index) const {
  const Node& from = nodes_[index];
  if (IsText(index)) return from.text;
  std::string text;
  for (int child : from.children) text += TextContent(child);
  return text;
}

}  // namespace fanyi
