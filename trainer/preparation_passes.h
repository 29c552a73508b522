// The passes PrepareCorpus makes over a training corpus (PreparationPasses),
// each reading it in chunks that every core normalizes and tokenizes:
// preparation_passes.cc reads and tokenizes, preparation_vocabularies.cc
// trains the subword models and builds the vocabularies, and
// preparation_shards.cc writes the id shards and the dev set.
#ifndef FANYI_TRAINER_PREPARATION_PASSES_H_
#define FANYI_TRAINER_PREPARATION_PASSES_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/text/pair_masker.h"
#include "common/text/parallel_corpus.h"
#include "common/text/script_converter.h"
#include "common/text/tokenizer.h"
#include "trainer/preparation_options.h"
#include "trainer/prepared_corpus.h"

namespace fanyi {

// The script a side in `language` is written in for training, given its
// --*_script flag: "simplified" when it is Chinese and converted to it, else
// "" (as the corpus has it).
std::string TrainingScript(const std::string& language,
                           const std::string& script);

// Seconds from `start` until now.
double SecondsSince(std::chrono::steady_clock::time_point start);

// The passes over one corpus and what they found.
class PreparationPasses {
 public:
  PreparationPasses(const PreparationOptions& options, std::ostream& log);

  // Trains the subword models the options ask for on a sample of the
  // normalized training text.
  void TrainSubwords(const std::string& work_dir,
                     CorpusVocabularies* vocabularies);
  // Counts the tokens of the training text and builds the vocabularies.
  void BuildVocabularies(CorpusVocabularies* vocabularies);
  // Tokenizes the training pairs again, maps them to ids and writes the
  // shards into `directory`; fills the manifest's training figures.
  void WriteShards(const std::string& directory, nlohmann::json* manifest);
  // Writes dev.shard and dev.tsv; fills the manifest's dev figures.
  void WriteDev(const std::string& directory, nlohmann::json* manifest);

  // Tokenizes, and maps tokens to ids, with `vocabularies` from now on (kept
  // by pointer: they must outlive the passes).
  void SetTokenizers(const CorpusVocabularies& vocabularies);
  // Tokenizing threads.
  int threads() const { return static_cast<int>(workers_.size()); }

 private:
  using Clock = std::chrono::steady_clock;
  using TokenCounts = std::unordered_map<std::string, int64_t>;

  // Placeholders a training sentence may hold (｟1｠ ... ｟8｠).
  static constexpr int kMaxPlaceholders = 8;

  // One thread's tools: each thread converts and tokenizes with its own.
  struct Worker {
    std::optional<ScriptConverter> source_to_simplified;
    std::optional<ScriptConverter> target_to_simplified;
    PairMasker masker{kMaxPlaceholders};
    std::optional<Tokenizer> source_tokenizer;
    std::optional<Tokenizer> target_tokenizer;
    TokenCounts source_counts;
    TokenCounts target_counts;
  };

  // Runs `work(worker, begin, end)` over [0, count) cut into one contiguous
  // part per worker, each on its own thread; rethrows the first error.
  static void ParallelFor(
      int workers, int64_t count,
      const std::function<void(int, int64_t, int64_t)>& work);
  // Calls `each` with every chunk of the training file's usable pairs; the
  // first pass logs and counts the bad lines.
  void ForEachChunk(
      const std::function<void(std::vector<SentencePair>&)>& each);
  // Converts a Chinese side to the model's script (dev pairs too).
  void NormalizeScript(Worker& worker, SentencePair* pair) const;
  // Puts placeholders in place of the spans both sides share; returns
  // whether there were any.
  bool MaskPlaceholders(Worker& worker, SentencePair* pair) const;
  // Normalizes and tokenizes `pair` for training.
  void Tokenize(Worker& worker, SentencePair* pair,
                std::vector<std::string>* source,
                std::vector<std::string>* target, bool* masked) const;

  const PreparationOptions& options_;
  std::ostream& log_;
  std::vector<Worker> workers_;
  const CorpusVocabularies* vocabularies_ = nullptr;
  bool first_pass_done_ = false;
  int64_t bad_lines_ = 0;
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_PREPARATION_PASSES_H_
