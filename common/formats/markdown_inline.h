#ifndef FANYI_COMMON_FORMATS_MARKDOWN_INLINE_H_
#define FANYI_COMMON_FORMATS_MARKDOWN_INLINE_H_

#include <cstddef>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fanyi {

// An inline construct that a Markdown text crosses as one marker
// (markdown_reader.h): [begin, end) of the source, and for a link, an image
// or emphasis the words it wraps, [words_begin, words_end) (empty for code,
// autolinks and HTML).
struct MarkdownInline {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t words_begin = 0;
  std::size_t words_end = 0;
  // False for characters that are words after all (unmatched backticks),
  // skipped together.
  bool marker = true;
};

// Finds the inline constructs of a Markdown document's texts: code spans,
// autolinks, inline HTML, links, images, emphasis and strikethrough.
class MarkdownInlineScanner {
 public:
  // Pairs each [ and ( of `source` with its ] and ), in one pass (escapes
  // skipped). `source` must outlive the scanner.
  explicit MarkdownInlineScanner(std::string_view source);

  // The constructs in [begin, end) of the source, in order, at most
  // kMaxInlineMarkers (placeholders.h); linear in end - begin.
  std::vector<MarkdownInline> Scan(std::size_t begin, std::size_t end) const;

 private:
  // What one scan has learnt: delimiters with no closing after some point,
  // so that a later opener of the same kind looks no further.
  struct ScanMemo {
    std::vector<std::string_view> unclosed;  // Delimiters never closed again.
    std::size_t next_angle = 0;              // The next '>' at or after...
    std::size_t angle_from = std::string_view::npos;  // ...this position.
  };

  // The construct starting at `at`, or one with end == at when none does.
  MarkdownInline InlineAt(std::size_t at, std::size_t end,
                          ScanMemo* memo) const;
  // The end of a run of `delimiter` after `from` and before `end` that
  // `accepts`, or npos; remembers a delimiter never closed.
  template <typename Accepts>
  std::size_t FindClosing(std::string_view delimiter, std::size_t from,
                          std::size_t end, ScanMemo* memo,
                          Accepts accepts) const;
  // Where the bracket or parenthesis at `open` closes within `end`, or npos.
  std::size_t Matching(std::size_t open, std::size_t end) const;

  const std::string_view source_;
  // Each bracket or parenthesis's closing one, by position.
  std::unordered_map<std::size_t, std::size_t> matching_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_MARKDOWN_INLINE_H_
