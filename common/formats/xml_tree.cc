#include "common/formats/xml_tree.h"

#include <expat.h>

#include <cstring>
#include <memory>
#include <stdexcept>

#include "common/formats/expat_memory.h"

namespace fanyi {
namespace {

// What Expat may hold while it parses a document of n bytes:
// kExpatFloor plus kExpatBytesPerByte * n. Expat writes a prefixed
// attribute's namespace URI into its name, and a few kilobytes of zip can
// declare a megabyte URI for thousands of attributes of one tag (gigabytes);
// its own structures for a real part take a fraction of the part's size.
constexpr std::size_t kExpatFloor = std::size_t{16} << 20;
constexpr std::size_t kExpatBytesPerByte = 2;

}  // namespace

// Expat's callbacks: each event's byte range is where Expat says the event
// is in the buffer.
struct XmlTreeBuilder {
  XmlTree* tree = nullptr;
  XML_Parser parser = nullptr;
  int max_depth = 0;
  std::vector<int> open;  // Elements not yet closed, innermost last.
  bool doctype = false;
  std::string refusal;  // Why the parse was stopped, if a limit did.

  std::size_t Offset() const {
    return static_cast<std::size_t>(XML_GetCurrentByteIndex(parser));
  }
  std::size_t Length() const {
    return static_cast<std::size_t>(XML_GetCurrentByteCount(parser));
  }

  // Stops the parse with `why`.
  void Refuse(std::string why) {
    refusal = std::move(why);
    XML_StopParser(parser, XML_FALSE);
  }

  // Adds `node` under the innermost open element; -1, with the parse
  // stopped, when the tree is full.
  int Add(XmlTree::Node node) {
    if (tree->nodes_.size() == XmlTree::kMaxNodes) {
      Refuse("XML has more than " + std::to_string(XmlTree::kMaxNodes) +
             " elements and stretches of text; the limit is " +
             std::to_string(XmlTree::kMaxNodes));
      return -1;
    }
    tree->nodes_.push_back(std::move(node));
    const int index = static_cast<int>(tree->nodes_.size()) - 1;
    if (!open.empty()) tree->nodes_[open.back()].children.push_back(index);
    return index;
  }

  static void OnStart(void* data, const XML_Char* name, const XML_Char**) {
    auto* self = static_cast<XmlTreeBuilder*>(data);
    if (!self->refusal.empty()) return;  // Events already queued.
    if (self->open.size() == static_cast<std::size_t>(self->max_depth)) {
      self->Refuse("XML nests elements more than " +
                   std::to_string(self->max_depth) + " deep; the limit is " +
                   std::to_string(self->max_depth));
      return;
    }
    const std::size_t name_bytes = std::strlen(name);
    if (name_bytes > XmlTree::kMaxNameBytes) {
      self->Refuse("XML element name of " + std::to_string(name_bytes) +
                   " bytes, namespace included; the limit is " +
                   std::to_string(XmlTree::kMaxNameBytes));
      return;
    }
    XmlTree::Node node;
    node.name = *self->tree->names_.emplace(name, name_bytes).first;
    node.begin = self->Offset();
    node.open_end = node.begin + self->Length();
    const int index = self->Add(std::move(node));
    if (index < 0) return;
    if (self->open.empty()) self->tree->root_ = index;
    self->open.push_back(index);
  }

  static void OnEnd(void* data, const XML_Char*) {
    auto* self = static_cast<XmlTreeBuilder*>(data);
    if (!self->refusal.empty()) return;
    XmlTree::Node& node = self->tree->nodes_[self->open.back()];
    // An empty-element tag (<w:b/>) ends where it starts: no end tag.
    const std::size_t length = self->Length();
    node.close_begin = length == 0 ? node.open_end : self->Offset();
    node.end = node.close_begin + length;
    self->open.pop_back();
  }

  static void OnText(void* data, const XML_Char* text, int length) {
    auto* self = static_cast<XmlTreeBuilder*>(data);
    self->AddText(text, static_cast<std::size_t>(length));
  }

  // A CDATA section's markers (<![CDATA[ and ]]>) belong to the data
  // between them: a node's range then covers them, so that an edit of it
  // replaces the whole section, not its inside alone.
  static void OnCdataMarker(void* data) {
    static_cast<XmlTreeBuilder*>(data)->AddText("", 0);
  }

  // Adds the current event's bytes as character data `text`, to the last
  // node when that is data the event touches.
  void AddText(const XML_Char* text, std::size_t length) {
    if (open.empty() || !refusal.empty()) return;
    const std::size_t begin = Offset();
    const std::size_t end = begin + Length();
    std::vector<int>& siblings = tree->nodes_[open.back()].children;
    // Expat hands data over in pieces (an entity is a piece of its own):
    // pieces that touch are one node.
    if (!siblings.empty() && tree->IsText(siblings.back()) &&
        tree->nodes_[siblings.back()].end == begin) {
      XmlTree::Node& last = tree->nodes_[siblings.back()];
      last.text.append(text, length);
      last.end = end;
      return;
    }
    XmlTree::Node node;
    node.begin = begin;
    node.open_end = node.close_begin = begin;
    node.end = end;
    node.text.assign(text, length);
    Add(std::move(node));
  }

  static void OnDoctype(void* data, const XML_Char*, const XML_Char*,
                        const XML_Char*, int) {
    auto* self = static_cast<XmlTreeBuilder*>(data);
    self->doctype = true;
    XML_StopParser(self->parser, XML_FALSE);
  }
};

XmlTree::XmlTree(std::string_view xml, int max_depth) {
  if (xml.size() > static_cast<std::size_t>(INT32_MAX)) {
    throw std::invalid_argument("XML document too large");
  }
  // Declared before the parser: the budget outlives its last free.
  ExpatMemory memory{kExpatFloor + kExpatBytesPerByte * xml.size()};
  const ExpatMemoryScope scope(&memory);
  const XML_Char separator[] = " ";
  std::unique_ptr<XML_ParserStruct, void (*)(XML_Parser)> parser(
      XML_ParserCreate_MM("UTF-8", &kBudgetedExpatMemory, separator),
      XML_ParserFree);
  if (parser == nullptr) throw std::bad_alloc();
  XmlTreeBuilder builder;
  builder.tree = this;
  builder.parser = parser.get();
  builder.max_depth = max_depth;
  XML_SetUserData(parser.get(), &builder);
  XML_SetElementHandler(parser.get(), XmlTreeBuilder::OnStart,
                        XmlTreeBuilder::OnEnd);
  XML_SetCharacterDataHandler(parser.get(), XmlTreeBuilder::OnText);
  XML_SetCdataSectionHandler(parser.get(), XmlTreeBuilder::OnCdataMarker,
                             XmlTreeBuilder::OnCdataMarker);
  XML_SetStartDoctypeDeclHandler(parser.get(), XmlTreeBuilder::OnDoctype);
  const XML_Status status = XML_Parse(parser.get(), xml.data(),
                                      static_cast<int>(xml.size()), XML_TRUE);
  if (!builder.refusal.empty()) throw std::invalid_argument(builder.refusal);
  if (memory.exhausted) {
    throw std::invalid_argument(
        "XML: parsing it would take more than " +
        std::to_string((kExpatFloor + kExpatBytesPerByte * xml.size()) >> 20) +
        " MiB (long namespaces on many attributes?); send simpler XML");
  }
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
