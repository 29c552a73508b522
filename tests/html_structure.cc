#include "tests/html_structure.h"

#include <gumbo.h>

namespace fanyi::testing_util {
namespace {

void AppendStructure(const GumboNode* node, int depth,
                     std::vector<std::string>* elements) {
  if (node->type != GUMBO_NODE_ELEMENT) return;
  const GumboElement& element = node->v.element;
  std::string line =
      std::to_string(depth) + " " + gumbo_normalized_tagname(element.tag);
  for (unsigned i = 0; i < element.attributes.length; ++i) {
    const auto* attribute =
        static_cast<const GumboAttribute*>(element.attributes.data[i]);
    line += std::string(" ") + attribute->name;
    // The words of the translated attributes change; the others must not.
    const std::string name = attribute->name;
    if (name != "alt" && name != "title" && name != "placeholder" &&
        name != "aria-label") {
      line += std::string("=") + attribute->value;
    }
  }
  elements->push_back(line);
  for (unsigned i = 0; i < element.children.length; ++i) {
    AppendStructure(static_cast<const GumboNode*>(element.children.data[i]),
                    depth + 1, elements);
  }
}

}  // namespace

std::vector<std::string> HtmlStructure(const std::string& html) {
  GumboOutput* output =
      gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size());
  std::vector<std::string> elements;
  AppendStructure(output->root, 0, &elements);
  gumbo_destroy_output(&kGumboDefaultOptions, output);
  return elements;
}

}  // namespace fanyi::testing_util
