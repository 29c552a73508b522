#include "trainer/preparation_options.h"

#include <filesystem>
#include <stdexcept>
#include <string>

#include "trainer/corpus_sources.h"

namespace fanyi {

void PreparationOptions::Validate() const {
  auto require = [](bool condition, const std::string& message) {
    if (!condition) throw std::invalid_argument(message);
  };
  require(!train_path.empty(), "--train is required");
  require(!dev_path.empty(), "--dev is required");
  require(
      suggestions_path.empty() ||
          (KindOfCorpusFile(suggestions_path) == CorpusFileKind::kSuggestions &&
           std::filesystem::is_regular_file(suggestions_path)),
      "--suggestions must name one suggestions file (.db, .sqlite or "
      ".sqlite3)");
  require(suggestion_repeats >= 1 && suggestion_repeats <= 1000,
          "--suggestion_repeats must be 1 to 1000");
  require(columns.source >= 0 && columns.target >= 0 &&
              columns.source != columns.target,
          "--source_column and --target_column must be two different "
          "columns, numbered from 1");
  require(vocab_min_count >= 1, "--vocab_min_count must be at least 1");
  require(vocab_max_size == 0 || vocab_max_size >= 4,
          "--vocab_max_size must be 0 (unlimited) or at least 4");
  require(source_subwords == 0 || source_subwords >= 8,
          "--source_subwords must be 0 (words) or at least 8");
  require(target_subwords == 0 || target_subwords >= 8,
          "--target_subwords must be 0 (characters or words) or at least 8");
  require(subword_type == "unigram" || subword_type == "bpe",
          "--subword_type must be unigram or bpe");
  require(!bidirectional || (source_subwords == 0 && target_subwords == 0),
          "--bidirectional takes words and characters, not "
          "--source_subwords or --target_subwords");
  require(source_script == "simplified" || source_script == "keep",
          "--source_script must be simplified or keep");
  require(target_script == "simplified" || target_script == "keep",
          "--target_script must be simplified or keep");
  require(max_tokens >= 1, "--max_tokens must be at least 1");
  require(shard_pairs >= 1, "--shard_pairs must be at least 1");
  require(threads >= 0, "--threads must not be negative");
}

std::string PreparationOptions::TrainingFiles() const {
  std::string files = train_path;
  if (suggestions_path.empty()) return files;
  for (int i = 0; i < suggestion_repeats; ++i) {
    files += (files.empty() ? "" : ",") + suggestions_path;
  }
  return files;
}

}  // namespace fanyi
