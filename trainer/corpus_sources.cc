#include "trainer/corpus_sources.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "common/formats/gettext_catalog.h"
#include "common/formats/mo_reader.h"
#include "common/formats/po_reader.h"
#include "common/text/utf8.h"

namespace fanyi {

namespace fs = std::filesystem;

namespace {

// Text read from a suggestions file per chunk, at most (and a little).
constexpr std::size_t kChunkBytes = std::size_t{16} << 20;

std::string Extension(const std::string& path) {
  return AsciiLowercase(fs::path(path).extension().string());
}

// The pairs of the catalog at `path`, as CorpusReader gives them: the
// catalog translates into `language` (its header's Language, when it has
// one, says so), and the pairs go the other way round when `reversed`.
std::vector<SentencePair> CatalogPairs(const std::string& path,
                                       CorpusFileKind kind,
                                       const std::string& language,
                                       bool reversed) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (error) throw std::runtime_error(path + ": " + error.message());
  if (size > kMaxCatalogBytes) {
    throw std::runtime_error(path + ": " + std::to_string(size) +
                             " bytes; a catalog is read whole, and may have " +
                             std::to_string(kMaxCatalogBytes) + " at most");
  }
  std::ifstream file(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)),
                          std::istreambuf_iterator<char>());
  if (!file && !file.eof()) throw std::runtime_error(path + ": read failed");
  GettextCatalog catalog;
  try {
    catalog = kind == CorpusFileKind::kPo ? ReadPo(bytes) : ReadMo(bytes);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  if (!catalog.language.empty() && !LanguageTagIs(catalog.language, language)) {
    throw std::runtime_error(path + ": a catalog into \"" + catalog.language +
                             "\" (its header's Language), not \"" + language +
                             "\"");
  }
  std::vector<SentencePair> pairs;
  int64_t number = 0;
  for (CatalogPair& pair : TrainingPairs(catalog)) {
    ++number;  // The pair's place in the catalog: .mo files have no lines.
    if (reversed) std::swap(pair.source, pair.target);
    pairs.push_back({std::move(pair.source), std::move(pair.target), number});
  }
  return pairs;
}

}  // namespace

CorpusFileKind KindOfCorpusFile(const std::string& path) {
  const std::string extension = Extension(path);
  if (extension == ".po") return CorpusFileKind::kPo;
  if (extension == ".mo") return CorpusFileKind::kMo;
  if (extension == ".tmx") return CorpusFileKind::kTmx;
  if (extension == ".xlf" || extension == ".xliff") {
    return CorpusFileKind::kXliff;
  }
  if (extension == ".db" || extension == ".sqlite" || extension == ".sqlite3") {
    return CorpusFileKind::kSuggestions;
  }
  if (extension == ".pot") return CorpusFileKind::kNone;
  return CorpusFileKind::kTsv;
}

std::vector<std::string> CorpusFiles(const std::string& list) {
  std::vector<std::string> files;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    std::size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    const std::string path = list.substr(begin, end - begin);
    begin = end + 1;
    if (path.empty()) continue;
    std::error_code error;
    if (fs::is_directory(path, error)) {
      std::vector<std::string> inside;
      fs::directory_iterator listing(path, error);
      if (error) throw std::runtime_error(path + ": " + error.message());
      for (const fs::directory_entry& entry : listing) {
        const std::string name = entry.path().string();
        const CorpusFileKind kind = KindOfCorpusFile(name);
        // Suggestions files only by name: a folder may hold other SQLite
        // files, or the live one a server writes.
        if (entry.is_regular_file() && kind != CorpusFileKind::kNone &&
            kind != CorpusFileKind::kSuggestions &&
            (kind != CorpusFileKind::kTsv || Extension(name) == ".tsv")) {
          inside.push_back(name);
        }
      }
      if (inside.empty()) {
        throw std::runtime_error(
            path + ": no .tsv, .po, .mo, .tmx, .xlf or .xliff file in it");
      }
      std::sort(inside.begin(), inside.end());
      files.insert(files.end(), inside.begin(), inside.end());
    } else if (fs::exists(path, error)) {
      if (KindOfCorpusFile(path) == CorpusFileKind::kNone) {
        throw std::runtime_error(path +
                                 ": a template (.pot) holds no translations");
      }
      files.push_back(path);
    } else {
      throw std::runtime_error(path + ": no such file or directory");
    }
  }
  if (files.empty()) throw std::runtime_error("no corpus file given");
  return files;
}

CorpusReader::CorpusReader(const std::string& list, TsvColumns columns,
                           std::string source_language,
                           std::string target_language)
    : files_(CorpusFiles(list)),
      columns_(columns),
      source_language_(std::move(source_language)),
      target_language_(std::move(target_language)) {
  columns_.Validate();
  Open();
}

CorpusReader::~CorpusReader() = default;

void CorpusReader::Open() {
  const std::string& path = files_[current_];
  const CorpusFileKind kind = KindOfCorpusFile(path);
  tsv_.reset();
  memory_.reset();
  memory_file_ = std::ifstream();
  suggestions_.reset();
  catalog_pairs_.clear();
  catalog_next_ = 0;
  if (kind == CorpusFileKind::kTsv) {
    tsv_ = std::make_unique<ParallelTsvReader>(path, columns_);
  } else if (kind == CorpusFileKind::kTmx || kind == CorpusFileKind::kXliff) {
    memory_file_.open(path, std::ios::binary);
    if (!memory_file_) throw std::runtime_error(path + ": cannot open");
    memory_ = std::make_unique<TranslationMemoryReader>(
        kind == CorpusFileKind::kTmx ? TranslationMemoryReader::Format::kTmx
                                     : TranslationMemoryReader::Format::kXliff,
        source_language_, target_language_);
  } else if (kind == CorpusFileKind::kSuggestions) {
    suggestions_ = std::make_unique<SuggestionReader>(path);
  } else {
    const bool reversed = columns_.source > columns_.target;
    catalog_pairs_ = CatalogPairs(
        path, kind, reversed ? source_language_ : target_language_, reversed);
  }
}

void CorpusReader::FillFromMemory(std::size_t count) {
  const std::string& path = files_[current_];
  std::string block(std::size_t{1} << 20, '\0');
  std::vector<MemoryPair> found;
  while (memory_ != nullptr && catalog_pairs_.size() < count) {
    memory_file_.read(block.data(), static_cast<std::streamsize>(block.size()));
    const std::size_t got = static_cast<std::size_t>(memory_file_.gcount());
    if (memory_file_.bad()) throw std::runtime_error(path + ": read failed");
    const bool last = got < block.size();
    try {
      memory_->Feed(std::string_view(block.data(), got), last, &found);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(path + ": " + e.what());
    }
    for (MemoryPair& pair : found) {
      catalog_pairs_.push_back(
          {std::move(pair.source), std::move(pair.target), pair.line_number});
    }
    found.clear();
    if (last) memory_.reset();
  }
}

bool CorpusReader::Read(int64_t max_lines, ParallelCorpus* chunk) {
  while (true) {
    if (memory_ != nullptr) {
      // Pairs handed out are dropped, so that memory stays bounded.
      catalog_pairs_.erase(
          catalog_pairs_.begin(),
          catalog_pairs_.begin() + static_cast<std::ptrdiff_t>(catalog_next_));
      catalog_next_ = 0;
      FillFromMemory(static_cast<std::size_t>(std::max<int64_t>(max_lines, 1)));
    }
    if (tsv_ != nullptr) {
      if (tsv_->Read(max_lines, chunk)) return true;
    } else if (suggestions_ != nullptr) {
      if (ReadSuggestions(max_lines, chunk)) return true;
    } else if (catalog_next_ < catalog_pairs_.size()) {
      const std::size_t end = std::min(
          catalog_pairs_.size(),
          catalog_next_ +
              static_cast<std::size_t>(std::max<int64_t>(max_lines, 1)));
      for (; catalog_next_ < end; ++catalog_next_) {
        chunk->pairs.push_back(std::move(catalog_pairs_[catalog_next_]));
      }
      return true;
    }
    if (current_ + 1 >= files_.size()) return false;
    ++current_;
    Open();
  }
}

bool CorpusReader::ReadSuggestions(int64_t max_rows, ParallelCorpus* chunk) {
  Suggestion suggestion;
  int64_t row = 0;
  int64_t read = 0;
  // A chunk of rows, or of text: a row may hold up to kMaxSuggestionBytes.
  std::size_t bytes = 0;
  while (read < std::max<int64_t>(max_rows, 1) && bytes < kChunkBytes &&
         suggestions_->Next(&suggestion, &row)) {
    ++read;
    bytes += suggestion.text.size() + suggestion.suggestion.size();
    const bool forward =
        LanguageTagIs(suggestion.source_language, source_language_) &&
        LanguageTagIs(suggestion.target_language, target_language_);
    const bool backward =
        LanguageTagIs(suggestion.source_language, target_language_) &&
        LanguageTagIs(suggestion.target_language, source_language_);
    if (!forward && !backward) continue;  // Another pair's.
    SentencePair pair{SqueezedWhitespace(suggestion.text),
                      SqueezedWhitespace(suggestion.suggestion), row};
    if (!forward) std::swap(pair.source, pair.target);
    try {
      DecodeUtf8(pair.source);
      DecodeUtf8(pair.target);
    } catch (const std::invalid_argument& e) {
      chunk->bad_lines.push_back({row, e.what()});
      continue;
    }
    if (pair.source.empty() || pair.target.empty()) {
      chunk->bad_lines.push_back(
          {row, pair.source.empty() ? "empty source" : "empty target"});
      continue;
    }
    chunk->pairs.push_back(std::move(pair));
  }
  return read > 0;
}

ReadCorpus ReadCorpusFiles(const std::string& list, TsvColumns columns,
                           std::string source_language,
                           std::string target_language) {
  CorpusReader reader(list, columns, std::move(source_language),
                      std::move(target_language));
  ReadCorpus corpus;
  ParallelCorpus chunk;
  while (reader.Read(1 << 16, &chunk)) {
    for (SentencePair& pair : chunk.pairs) {
      corpus.pairs.push_back(std::move(pair));
    }
    for (BadLine& bad : chunk.bad_lines) {
      corpus.bad_lines.push_back({reader.path(), std::move(bad)});
    }
    chunk = {};
  }
  return corpus;
}

}  // namespace fanyi
