#include "trainer/corpus_preparation.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

#include "common/text/subword_model.h"
#include "trainer/corpus_sources.h"
#include "trainer/output_directory.h"
#include "trainer/preparation_passes.h"

namespace fanyi {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

void WriteSubwordModel(const SubwordModel& model, const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  out << model.serialized();
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// Writes the corpus of `options` into `staging`.
void WriteCorpus(const PreparationOptions& options, const fs::path& staging,
                 std::ostream& log, const CorpusVocabularies* fixed,
                 Clock::time_point started) {
  PreparationPasses preparation(options, log);
  CorpusVocabularies vocabularies;
  if (fixed) {
    vocabularies = *fixed;
  } else {
    preparation.TrainSubwords(staging.string(), &vocabularies);
    preparation.BuildVocabularies(&vocabularies);
  }
  preparation.SetTokenizers(vocabularies);
  nlohmann::json manifest = {
      {"format", "fanyi-prepared-corpus"},
      {"format_version", PreparedCorpus::kFormatVersion},
      {"train", options.train_path},
      {"suggestions", options.suggestions_path},
      {"suggestion_repeats", options.suggestion_repeats},
      {"dev", options.dev_path},
      {"source_column", options.columns.source + 1},
      {"target_column", options.columns.target + 1},
      {"source_language", options.source_language},
      {"target_language", options.target_language},
      {"source_case", WordCaseName(options.source_case)},
      {"target_case", WordCaseName(options.target_case)},
      {"source_script",
       TrainingScript(options.source_language, options.source_script)},
      {"target_script",
       TrainingScript(options.target_language, options.target_script)},
      {"placeholders", options.placeholders},
      {"bidirectional", options.bidirectional},
      {"source_subwords", vocabularies.source_subwords != nullptr},
      {"target_subwords", vocabularies.target_subwords != nullptr},
      {"max_tokens", options.max_tokens},
      {"source_vocabulary_size", vocabularies.source.size()},
      {"target_vocabulary_size", vocabularies.target.size()},
  };
  preparation.WriteShards(staging.string(), &manifest);
  preparation.WriteDev(staging.string(), &manifest);
  vocabularies.source.Save((staging / "source_vocabulary.json").string());
  vocabularies.target.Save((staging / "target_vocabulary.json").string());
  if (vocabularies.source_subwords) {
    WriteSubwordModel(*vocabularies.source_subwords,
                      staging / "source_subwords.model");
  }
  if (vocabularies.target_subwords) {
    WriteSubwordModel(*vocabularies.target_subwords,
                      staging / "target_subwords.model");
  }
  manifest["preparation_seconds"] = SecondsSince(started);
  manifest["threads"] = preparation.threads();
  {
    std::ofstream out(staging / PreparedCorpus::kManifestFile);
    out << manifest.dump(2) << "\n";
    out.close();
    if (!out) {
      throw std::runtime_error(
          "cannot write " + (staging / PreparedCorpus::kManifestFile).string());
    }
  }
}

}  // namespace

void PreparationOptions::Validate() const {
  auto require = [](bool condition, const std::string& message) {
    if (!condition) throw std::invalid_argument(message);
  };
  require(!train_path.empty(), "--train is required");
  require(!dev_path.empty(), "--dev is required");
  require(suggestions_path.empty() || (KindOfCorpusFile(suggestions_path) ==
                                           CorpusFileKind::kSuggestions &&
                                       fs::is_regular_file(suggestions_path)),
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

PreparedCorpus PrepareCorpus(const PreparationOptions& options,
                             const std::string& directory, std::ostream& log,
                             const CorpusVocabularies* fixed) {
  options.Validate();
  const auto started = Clock::now();
  const fs::path final_path(directory);
  const fs::path staging = final_path.string() + ".tmp";
  // The corpus is written beside its place, then renamed into it.
  CreateWritableDirectory(fs::absolute(final_path).parent_path().string());
  fs::remove_all(staging);
  fs::create_directories(staging);
  try {
    WriteCorpus(options, staging, log, fixed, started);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
  fs::remove_all(final_path);
  fs::rename(staging, final_path);
  log << "prepare: " << directory << " written in " << SecondsSince(started)
      << " s\n";
  return PreparedCorpus::Open(directory);
}

}  // namespace fanyi
