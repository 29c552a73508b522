#include "common/formats/html_elements.h"

#include <strings.h>

#include <cctype>
#include <cstring>
#include <string>

#include "common/formats/marked_document.h"
#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace html_elements {

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

}  // namespace html_elements
}  // namespace fanyi
