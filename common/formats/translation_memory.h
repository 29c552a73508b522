// Reading translation memories: TMX (how OPUS and translation tools
// exchange parallel corpora) and XLIFF 1.2 and 2.0 (how localization tools
// exchange a program's strings), streamed, in bounded memory.
#ifndef FANYI_COMMON_FORMATS_TRANSLATION_MEMORY_H_
#define FANYI_COMMON_FORMATS_TRANSLATION_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fanyi {

// A segment and its translation, and the line of the file it ends on.
struct MemoryPair {
  std::string source;
  std::string target;
  int64_t line_number = 0;
};

// True when a language tag ("en-US", "zh_CN", "ZH-Hans") is of the language
// `code` ("en", "zh"): the same primary subtag, ignoring case.
bool LanguageTagIs(std::string_view tag, std::string_view code);

// Reads the pairs of a TMX or XLIFF document as its bytes arrive, from
// `source_language` to `target_language` (ISO 639 codes, LanguageTagIs):
//  - TMX: each translation unit (<tu>) with a variant (<tuv xml:lang>) in
//    each language gives one pair.
//  - XLIFF 1.2: each <trans-unit> of a <file> whose source-language and
//    target-language are the two (either way round), with a <target>
//    whose state is not new or needs-* (a catalog's header, restype
//    x-gettext-domain-header, neither); alternatives (<alt-trans>) and
//    segmented copies (<seg-source>) are not read.
//  - XLIFF 2.0: each <segment> of a document whose srcLang and trgLang are
//    the two, with a <target>, unless its state is "initial".
// Inline codes (TMX's and XLIFF 1.2's <bpt>, <ept>, <ph>, <it>, <ut>, XLIFF
// 2.0's <originalData>) are left out of the text; elements that wrap words
// (<hi>, <g>, <pc>, <mrk>) keep them. Whitespace runs become one space and
// the ends are trimmed; pairs with an empty side, or a side over
// kMaxSegmentBytes, are left out.
class TranslationMemoryReader {
 public:
  enum class Format { kTmx, kXliff };

  static constexpr std::size_t kMaxSegmentBytes = 64 * 1024;
  static constexpr int kMaxDepth = 64;

  TranslationMemoryReader(Format format, std::string source_language,
                          std::string target_language);
  ~TranslationMemoryReader();
  TranslationMemoryReader(const TranslationMemoryReader&) = delete;
  TranslationMemoryReader& operator=(const TranslationMemoryReader&) = delete;

  // Parses the next `bytes` of the document (`last` for its end), and
  // appends the pairs they complete to `pairs`. Throws
  // std::invalid_argument with Expat's message and the line for XML that
  // is not well-formed, for a document type declaration with an internal
  // subset (entities), for elements nested more than kMaxDepth deep, for
  // an encoding Expat does not know, and for a document that would make
  // Expat hold more than 64 MiB (one tag of more than some 15 MiB). A
  // reader that threw takes nothing more.
  void Feed(std::string_view bytes, bool last, std::vector<MemoryPair>* pairs);

 private:
  struct State;  // The parser and what it has read, in the .cc file.
  std::unique_ptr<State> state_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_TRANSLATION_MEMORY_H_
