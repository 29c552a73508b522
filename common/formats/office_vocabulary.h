#ifndef FANYI_COMMON_FORMATS_OFFICE_VOCABULARY_H_
#define FANYI_COMMON_FORMATS_OFFICE_VOCABULARY_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/formats/marked_document.h"
#include "common/formats/xml_tree.h"

namespace fanyi {

// One child of a paragraph (or of a container of runs), as its text sees
// it.
struct RunItem {
  enum Kind {
    kWords,      // Words in one formatting (a Word run of text alone).
    kContainer,  // Runs inside an element (a hyperlink, a tracked insertion).
    kDropped,    // A spell-check mark, a layout hint.
    kKept        // Anything else: kept as it is, a marker in the text.
  };
  Kind kind = kKept;
  int node = 0;
  // kWords: what shows of its formatting (proofing marks, such as the
  // language, left out): items alike in it are one formatting.
  std::string formatting;
  // kWords: white space that reads the same in any formatting (between two
  // runs), which joins a text without a marker of its own.
  bool neutral = false;
  std::u32string words;         // kWords: its text.
  std::size_t words_begin = 0;  // kWords: where its words are written
  std::size_t words_end = 0;    // when it is translated on its own.
};

// How one office format writes paragraphs and runs: Word's
// WordprocessingML (.docx), DrawingML (a .pptx's slides and notes) and
// OpenDocument's text (.odt, .odp). The reader (office_xml_reader.h) walks
// any of them the same way.
class OfficeVocabulary {
 public:
  virtual ~OfficeVocabulary() = default;

  // The vocabulary whose paragraph element `node` is, or nullptr.
  static const OfficeVocabulary* OfParagraph(const XmlTree::Node& node);

  // The children of paragraph or container `index`, classified.
  virtual std::vector<RunItem> Items(const XmlTree& tree,
                                     std::string_view source,
                                     int index) const = 0;

  // How words in `base`'s formatting (a kWords item) are written between
  // markers: inside a run of its properties, or a span of its style.
  virtual TextWriting Writing(const XmlTree& tree, std::string_view source,
                              const RunItem& base) const = 0;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_OFFICE_VOCABULARY_H_
