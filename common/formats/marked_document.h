// A document cut into the texts to translate, everything else kept byte for
// byte. What each document format (HTML, and the file formats after it)
// reads a document into, and how the translated document is written back.
#ifndef FANYI_COMMON_FORMATS_MARKED_DOCUMENT_H_
#define FANYI_COMMON_FORMATS_MARKED_DOCUMENT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fanyi {

// How deep a document's readers let its elements nest (HTML, XML) by
// default: real documents stay far below it, and a reader's walk is
// bounded by it.
constexpr int kDefaultMaxDocumentDepth = 256;

// How a translated text is written into its document.
enum class TextEscape {
  kNone,            // As it is (plain text formats).
  kMarkupText,      // Element content: &, < and > as entities.
  kMarkupAttribute  // An attribute value: quotes too.
};

// How a text's translation is written into its document.
struct TextWriting {
  TextEscape escape = TextEscape::kMarkupText;
  // For kMarkupAttribute: the quote marks the value sits between ('"' or
  // '\'' inside quotes already there), 0 for an unquoted value, which gets
  // double quotes.
  char quote = 0;
  // Written before and after each stretch of words between markers (a
  // format whose words must sit inside an element of their own, as a Word
  // run's); empty stretches get neither.
  std::string words_before;
  std::string words_after;
};

// A document's source with edits: byte ranges replaced by the translation of
// a text. A text holds inline markers (common/text/placeholders.h) where the
// document had inline elements; marker k of a text is written back as one
// of its regions, a byte range of the source with edits of its own (a tag
// whose words are a text of their own, an attribute), wherever the
// translation put the marker. Everything outside the edits is copied as it
// was. Built by a format's reader; thread-safe once built (const).
class MarkedDocument {
 public:
  // The whole of `source` is region 0.
  explicit MarkedDocument(std::string source);

  // The source it was read from.
  const std::string& source() const { return source_; }

  // Adds a region, [begin, end) of the source, for a text's marker to
  // stand for. Throws std::out_of_range when it lies outside the source.
  int AddRegion(std::size_t begin, std::size_t end);

  // Adds an edit to `region`: [begin, end) of the source becomes the
  // translation of `text`, written as `writing` says. Marker k of `text`
  // stands for markers[k], regions inside [begin, end) in source order.
  // Returns false, and adds nothing, when the edit would not lie inside its
  // region after the edits it already has, or the markers not inside it in
  // order.
  bool AddText(int region, std::size_t begin, std::size_t end, std::string text,
               std::vector<int> markers, TextWriting writing = {});

  // The texts to translate, in the order they were added.
  const std::vector<std::string>& texts() const { return texts_; }

  // The texts' words, without markers, a line each: what the document says
  // (for language detection).
  std::string Words() const;

  // The document with each text replaced by its translation, in the order
  // of texts(). A marker the translation lacks is written at its end, and
  // one it repeats once, so that no tag is lost or doubled. Throws
  // std::invalid_argument when the counts differ or a translation is not
  // valid UTF-8.
  std::string Render(const std::vector<std::string>& translations) const;

 private:
  struct Edit {
    std::size_t begin = 0;
    std::size_t end = 0;
    int text = 0;              // Index into texts_.
    std::vector<int> markers;  // Region of each marker of the text.
    TextWriting writing;
  };
  struct Region {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::vector<Edit> edits;  // In source order, not overlapping.
  };

  // Appends region `index` of the source, with its edits, to `out`.
  void RenderRegion(int index, const std::vector<std::string>& translations,
                    std::string* out) const;
  // Appends one edit, its translation escaped and its markers expanded.
  void RenderEdit(const Edit& edit,
                  const std::vector<std::string>& translations,
                  std::string* out) const;

  std::string source_;
  std::vector<Region> regions_;
  std::vector<std::string> texts_;
};

// `text` written as element content (kMarkupText) or an attribute value
// between `quote` marks (kMarkupAttribute), or as it is (kNone).
std::string EscapeText(std::string_view text, TextEscape escape,
                       char quote = '"');

// `text` (UTF-8) decoded, with the noncharacters that would read as inline
// markers made U+FFFD: a document's own words as a reader hands them on.
// Throws std::invalid_argument for invalid UTF-8.
std::u32string DecodeWords(std::string_view text);

// `text` with each run of ASCII whitespace made one space, trimmed: how a
// reader hands on words that a format lays out freely.
std::u32string CollapseSpaces(std::u32string_view text);

// True when `text` has a letter outside inline markers: words worth
// translating. Digits, punctuation and symbols alone are not.
bool HasLetters(std::u32string_view text);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_MARKED_DOCUMENT_H_
