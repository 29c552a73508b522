#include "trainer/training_data.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>

#include "common/text/subword_model.h"
#include "common/text/vocabulary.h"

namespace fanyi {

namespace fs = std::filesystem;

PreparedCorpus TrainingData::PrepareRawText(const TrainingOptions& options,
                                            const fs::path& directory,
                                            const CorpusVocabularies* fixed,
                                            std::ostream& log) {
  PreparationOptions preparation = options.corpus;
  preparation.max_tokens = options.model.max_positions - 1;
  preparation.threads = options.threads;
  if (fixed || !group_) {
    return PrepareCorpus(preparation, directory.string(), log, fixed);
  }
  // A new data-parallel run: rank 0 builds the vocabularies, the others
  // take its files (through the rendezvous store), so every rank maps text
  // to the same ids.
  std::optional<PreparedCorpus> prepared;
  if (leads()) {
    prepared.emplace(
        PrepareCorpus(preparation, directory.string(), log, nullptr));
  }
  fs::create_directories(directory);
  const fs::path own = prepared ? fs::path(prepared->directory()) : directory;
  CorpusVocabularies shared;
  for (const char* name : {"source_vocabulary.json", "target_vocabulary.json",
                           "source_subwords.model", "target_subwords.model"}) {
    std::string bytes;
    if (leads() && fs::exists(own / name)) {
      std::ifstream in(own / name, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    bytes = group_->ShareFromFirstRank(name, bytes);
    if (leads() || bytes.empty()) continue;
    const fs::path path = directory / (std::string("shared_") + name);
    std::ofstream(path, std::ios::binary) << bytes;
    const std::string file = name;
    if (file == "source_vocabulary.json") {
      shared.source = Vocabulary::Load(path.string());
    } else if (file == "target_vocabulary.json") {
      shared.target = Vocabulary::Load(path.string());
    } else {
      (file == "source_subwords.model" ? shared.source_subwords
                                       : shared.target_subwords) =
          std::make_shared<const SubwordModel>(
              SubwordModel::FromSerialized(std::move(bytes)));
    }
  }
  if (prepared) return std::move(*prepared);
  return PrepareCorpus(preparation, (directory / "corpus").string(), log,
                       &shared);
}

fs::path RankScratchDirectory(int rank, int64_t pid) {
  return fs::temp_directory_path() /
         ("fanyi-train-rank" + std::to_string(rank) + "-" +
          std::to_string(pid));
}

TrainingData::TrainingData(const TrainingOptions& options, DataParallel* group,
                           const CorpusVocabularies* fixed, std::ostream& log)
    : group_(group) {
  try {
    Open(options, fixed, log);
  } catch (...) {
    RemoveScratchDirectory();  // The destructor will not run.
    throw;
  }
}

TrainingData::~TrainingData() { RemoveScratchDirectory(); }

void TrainingData::RemoveScratchDirectory() {
  std::error_code ignored;
  if (!scratch_dir_.empty()) fs::remove_all(scratch_dir_, ignored);
}

void TrainingData::Open(const TrainingOptions& options,
                        const CorpusVocabularies* fixed, std::ostream& log) {
  if (!options.data_dir.empty()) {
    corpus_.emplace(PreparedCorpus::Open(options.data_dir));
    if (group_ && group_->ShareFromFirstRank("corpus_manifest",
                                             corpus_->manifest().dump()) !=
                      corpus_->manifest().dump()) {
      throw std::runtime_error("--data " + options.data_dir +
                               " differs from rank 0's: every "
                               "rank must read the same prepared corpus");
    }
  } else if (leads()) {
    const fs::path own = fs::path(options.out_dir) / "data";
    // A resumed run reads the corpus it prepared, when that is still there
    // and was made with the run's vocabularies.
    std::optional<PreparedCorpus> reused;
    if (fixed && fs::exists(own / PreparedCorpus::kManifestFile)) {
      try {
        reused.emplace(PreparedCorpus::Open(own.string()));
        if (!(reused->vocabularies() == *fixed) ||
            reused->manifest().value("train", "") !=
                options.corpus.train_path ||
            reused->manifest().value("suggestions", "") !=
                options.corpus.suggestions_path ||
            reused->manifest().value("suggestion_repeats", 10) !=
                options.corpus.suggestion_repeats) {
          reused.reset();
        }
      } catch (const std::exception&) {
        reused.reset();
      }
    }
    corpus_.emplace(reused ? std::move(*reused)
                           : PrepareRawText(options, own, fixed, log));
  } else {
    scratch_dir_ = RankScratchDirectory(group_->rank(), getpid());
    corpus_.emplace(PrepareRawText(options, scratch_dir_, fixed, log));
  }
  if (fixed && !(corpus_->vocabularies() == *fixed)) {
    throw std::runtime_error("the prepared corpus " + corpus_->directory() +
                             " has other vocabularies than the run's "
                             "checkpoint in " +
                             options.out_dir + "/last");
  }
  if (corpus_->max_tokens() > options.model.max_positions - 1) {
    throw std::runtime_error(
        "the prepared corpus " + corpus_->directory() +
        " keeps pairs of up to " + std::to_string(corpus_->max_tokens()) +
        " tokens; --max_positions " +
        std::to_string(options.model.max_positions) + " must be at least " +
        std::to_string(corpus_->max_tokens() + 1));
  }
  const CorpusVocabularies& vocabularies = corpus_->vocabularies();
  dev_ = corpus_->ReadDev();
  const nlohmann::json& manifest = corpus_->manifest();
  log << "data: " << corpus_->directory() << ": " << corpus_->train_pairs()
      << " training pairs in " << corpus_->shard_paths().size() << " shards, "
      << dev_.sources.size()
      << " dev pairs; vocabularies: " << vocabularies.source.size()
      << " source, " << vocabularies.target.size() << " target tokens\n";
  // How much of the dev text each side's vocabulary misses: the figure to
  // compare tokenizers by, beside BLEU.
  log << "data: dev tokens unknown to the vocabularies: "
      << manifest.value("dev_unknown_source_percent", 0.0) << "% source, "
      << manifest.value("dev_unknown_target_percent", 0.0) << "% target\n";
}

void TrainingData::Describe(Checkpoint* checkpoint) const {
  const CorpusVocabularies& vocabularies = corpus_->vocabularies();
  checkpoint->source_vocabulary = vocabularies.source;
  checkpoint->target_vocabulary = vocabularies.target;
  checkpoint->source_subwords = vocabularies.source_subwords;
  checkpoint->target_subwords = vocabularies.target_subwords;
  checkpoint->source_language = corpus_->source_language();
  checkpoint->target_language = corpus_->target_language();
  checkpoint->source_script = corpus_->source_script();
  checkpoint->target_script = corpus_->target_script();
  checkpoint->source_case = corpus_->source_case();
  checkpoint->target_case = corpus_->target_case();
  checkpoint->longest_source_tokens = corpus_->longest_source_tokens();
  // A corpus too small for a ratio keeps the one the checkpoint has (a
  // model it fine-tunes).
  const auto [low, high] = corpus_->target_length_ratio();
  if (high > 0) {
    checkpoint->target_ratio_low = low;
    checkpoint->target_ratio_high = high;
  }
}

}  // namespace fanyi
