#ifndef FANYI_COMMON_FORMATS_PDF_TEXT_H_
#define FANYI_COMMON_FORMATS_PDF_TEXT_H_

#include <string>
#include <vector>

namespace fanyi {

// One paragraph of a PDF's text, as its pages lay it out.
struct PdfParagraph {
  std::string text;         // UTF-8: its lines joined, words hyphenated at a
                            // line's end joined again.
  double font_size = 0;     // In points: its first word's, 0 when unknown.
  bool page_start = false;  // First on its page.
};

// A PDF's text, read with poppler (Debian's libpoppler-cpp): each page's
// words in reading order, cut into lines and paragraphs by where they
// stand (a blank line's gap, a change of size, a jump to another column).
// A PDF keeps no paragraphs of its own, so this is what a reader sees.
class PdfText {
 public:
  // Pages past this are refused: each takes poppler a layout pass.
  static constexpr int kMaxPages = 1000;
  // Text past this, in all, is refused, words poppler gives without a
  // character worth keeping (control characters) counted as a byte each:
  // far more than a request translates (its words count against
  // --max_input_chars), so a long document is refused here, with a
  // message about the .pdf, not later about its .docx.
  static constexpr std::size_t kMaxTextBytes = 4 << 20;
  // Paragraphs past this are refused: the .docx holds a few XML nodes for
  // each, well within what its reader takes (XmlTree::kMaxNodes).
  static constexpr std::size_t kMaxParagraphs = 50000;

  // Reads the PDF in `bytes`. Throws std::invalid_argument when poppler
  // cannot read it, it is locked with a password, has more than kMaxPages
  // pages, kMaxTextBytes of text or kMaxParagraphs paragraphs, or has no
  // text at all (a scanned document, which would need OCR). poppler's
  // layout of a page takes time that grows with the square of its words,
  // which no limit here bounds: a server reads PDFs in a process of their
  // own under a CPU limit (fanyi-pdf-text).
  explicit PdfText(const std::string& bytes);

  const std::vector<PdfParagraph>& paragraphs() const { return paragraphs_; }

  // The text as a .docx a person can read and edit: a paragraph each, in
  // its size, each page after the first from a page break.
  std::string WordDocument() const;

 private:
  std::vector<PdfParagraph> paragraphs_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_PDF_TEXT_H_
