#ifndef FANYI_TESTS_HTML_STRUCTURE_H_
#define FANYI_TESTS_HTML_STRUCTURE_H_

#include <string>
#include <vector>

namespace fanyi::testing_util {

// The elements of `html`'s HTML5 parse (Gumbo) in tree order, each as its
// depth, tag name and attribute names and values (the values of alt, title,
// placeholder and aria-label left out): what must not change when only the
// words of a document are translated.
std::vector<std::string> HtmlStructure(const std::string& html);

}  // namespace fanyi::testing_util

#endif  // FANYI_TESTS_HTML_STRUCTURE_H_
