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
