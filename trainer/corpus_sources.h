// The corpora a training run reads, as its --train and --dev flags name
// them: tab-separated files, gettext catalogs (.po, .mo), translation
// memories (TMX, XLIFF), users' suggestions (SQLite), or several of them
// at once.
#ifndef FANYI_TRAINER_CORPUS_SOURCES_H_
#define FANYI_TRAINER_CORPUS_SOURCES_H_

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/formats/suggestion_store.h"
#include "common/formats/translation_memory.h"
#include "common/text/parallel_corpus.h"

namespace fanyi {

// The files of a comma-separated list ("train.tsv,catalogs/apt.po"), in
// order; a directory stands for the corpus files inside it (those whose
// kind CorpusFileKind knows, but suggestions files, which are named), in
// name order. Throws std::runtime_error for
// a path that does not exist or a directory with no corpus file.
std::vector<std::string> CorpusFiles(const std::string& list);

// How a corpus file is read, by its name: ".po" and ".mo" are gettext
// catalogs (msgid to msgstr: TrainingPairs in gettext_catalog.h), ".tmx"
// TMX and ".xlf", ".xliff" XLIFF (translation_memory.h), ".db", ".sqlite",
// ".sqlite3" users' suggestions (suggestion_store.h), ".pot" is none (a
// template holds no translations), anything else is TSV.
enum class CorpusFileKind { kTsv, kPo, kMo, kTmx, kXliff, kSuggestions, kNone };
CorpusFileKind KindOfCorpusFile(const std::string& path);

// Reads the pairs of several corpus files one after another, a chunk at a
// time, as ParallelTsvReader does for one: each chunk comes from one file,
// path() names it. A TSV file's pairs take `columns`; a catalog's go from
// msgid to msgstr, or the other way when columns.source > columns.target
// (the flags that train the other direction of a TSV corpus), and one
// whose header names a language other than the target's (the source's,
// reversed) is refused; a translation memory's and a suggestions file's go
// from `source_language` to `target_language` (a suggestion is a text and
// its translation: one the other way round is read reversed). A
// catalog is read whole (at most kMaxCatalogBytes), a translation memory
// and suggestions streamed; one that is not valid throws std::runtime_error
// naming the file and line (a suggestion's row).
class CorpusReader {
 public:
  CorpusReader(const std::string& list, TsvColumns columns,
               std::string source_language = "en",
               std::string target_language = "zh");
  ~CorpusReader();

  bool Read(int64_t max_lines, ParallelCorpus* chunk);
  // The file of the last chunk Read gave.
  const std::string& path() const { return files_.at(current_); }

 private:
  // Opens files_[current_]; catalogs are read into catalog_pairs_.
  void Open();

  // Reads translation memory pairs until `count` wait in catalog_pairs_, or
  // the file ends.
  void FillFromMemory(std::size_t count);
  // Reads up to `max_rows` rows (and about 16 MiB of text) of the
  // suggestions file into `chunk`: those of the pair, their whitespace
  // squeezed (bad ones among its bad lines); false when none was left.
  bool ReadSuggestions(int64_t max_rows, ParallelCorpus* chunk);

  std::vector<std::string> files_;
  TsvColumns columns_;
  std::string source_language_;
  std::string target_language_;
  std::size_t current_ = 0;
  std::unique_ptr<ParallelTsvReader> tsv_;
  // A catalog's pairs, or those a translation memory read so far.
  std::vector<SentencePair> catalog_pairs_;
  std::size_t catalog_next_ = 0;
  std::unique_ptr<TranslationMemoryReader> memory_;
  std::ifstream memory_file_;
  std::unique_ptr<SuggestionReader> suggestions_;
};

// A skipped line of a TSV file, with the file.
struct NamedBadLine {
  std::string path;
  BadLine line;
};
struct ReadCorpus {
  std::vector<SentencePair> pairs;
  std::vector<NamedBadLine> bad_lines;
};

// Every pair of the files of `list`, as CorpusReader reads them.
ReadCorpus ReadCorpusFiles(const std::string& list, TsvColumns columns,
                           std::string source_language = "en",
                           std::string target_language = "zh");

}  // namespace fanyi

#endif  // FANYI_TRAINER_CORPUS_SOURCES_H_
