// What an HTML element, an end tag or a text means to the HTML reader
// (html_reader.h): the inline elements a run of text crosses, the elements
// whose content is kept, those marked not to translate, and the words worth
// translating.
#ifndef FANYI_COMMON_FORMATS_HTML_ELEMENTS_H_
#define FANYI_COMMON_FORMATS_HTML_ELEMENTS_H_

#include <gumbo.h>

#include <string_view>

namespace fanyi {
namespace html_elements {

// Phrasing elements a run of text crosses. Others (blocks, tables, lists,
// unknown and custom elements) end it.
bool IsInline(GumboTag tag);

// Elements whose content is code, script, or not text at all.
bool KeepsContent(GumboTag tag);

// img, wbr and br: void elements, a start tag and no end tag.
bool IsVoid(GumboTag tag);

// The attribute `name` of `element`, or nullptr.
const GumboAttribute* Attribute(const GumboElement& element, const char* name);

// translate="no", or "notranslate" among the classes.
bool MarkedNotToTranslate(const GumboElement& element);

// True when `end_tag` ("</b >") is an end tag of `tag`.
bool ClosesElement(const GumboStringPiece& end_tag, GumboTag tag);

// True when `text` holds what reads as a tag: '<' before a letter, '/',
// '!' or '?'.
bool HoldsTag(const GumboStringPiece& text);

// Worth translating: a letter outside the markers, and not one word that
// is a mention, a hashtag or a URL.
bool Translatable(std::u32string_view text);

}  // namespace html_elements
}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_HTML_ELEMENTS_H_
