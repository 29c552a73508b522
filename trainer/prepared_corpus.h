// A corpus prepared for training: vocabularies, the training pairs as id
// shards, and the dev set.
#ifndef FANYI_TRAINER_PREPARED_CORPUS_H_
#define FANYI_TRAINER_PREPARED_CORPUS_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/text/subword_model.h"
#include "common/text/tokenizer.h"
#include "common/text/vocabulary.h"

namespace fanyi {

// The vocabularies of a corpus and, for subword sides, their models.
struct CorpusVocabularies {
  Vocabulary source = Vocabulary::Build({}, 1, 0);
  Vocabulary target = Vocabulary::Build({}, 1, 0);
  std::shared_ptr<const SubwordModel> source_subwords;  // Null: words.
  std::shared_ptr<const SubwordModel> target_subwords;  // Null: characters
                                                        // or words.
  // Whether both sides have the same tokens and subword models.
  bool operator==(const CorpusVocabularies& other) const;
};

// The dev pairs of a prepared corpus, whole (dev sets are small).
struct DevSet {
  std::vector<std::vector<int64_t>> sources;  // Ids, cut to max_tokens.
  std::vector<std::vector<int64_t>> targets;
  std::vector<std::string> texts;       // Raw source text, for BLEU.
  std::vector<std::string> references;  // Target text in the model's script.
};

// A directory written by PrepareCorpus (trainer/corpus_preparation.h):
//   corpus.json                what it holds and how it was made; written
//                              last, so a directory without it is incomplete
//   source_vocabulary.json, target_vocabulary.json
//   source_subwords.model, target_subwords.model   subword sides only
//   train-00000.shard, ...     the training pairs (trainer/token_shard.h)
//   dev.shard, dev.tsv         the dev pairs' ids; their source and reference
class PreparedCorpus {
 public:
  static constexpr int kFormatVersion = 1;
  static constexpr const char* kManifestFile = "corpus.json";

  // Opens a prepared corpus; throws std::runtime_error naming the file that
  // is missing or wrong.
  static PreparedCorpus Open(const std::string& directory);

  const std::string& directory() const { return directory_; }
  // corpus.json: languages, script, counts, shards (docs/design.md).
  const nlohmann::json& manifest() const { return manifest_; }
  const CorpusVocabularies& vocabularies() const { return vocabularies_; }
  // The training shards' paths, in the order they were written.
  const std::vector<std::string>& shard_paths() const { return shard_paths_; }

  std::string source_language() const;
  std::string target_language() const;
  // "simplified" when a Chinese side was converted to it, else ""; corpora
  // prepared before source_script kept a Chinese source as it was.
  std::string source_script() const;
  std::string target_script() const;
  // Whether each side's word-mode tokenizer lowercased; corpora prepared
  // before these fields lowercased both.
  WordCase source_case() const;
  WordCase target_case() const;
  int64_t train_pairs() const;
  int64_t longest_source_tokens() const;
  // The training pairs' target tokens per source token, as Checkpoint's
  // target_ratio_low and _high; {0, 0} for data prepared before the field.
  std::pair<double, double> target_length_ratio() const;
  // No training pair has more tokens on either side.
  int64_t max_tokens() const;

  // Reads dev.shard and dev.tsv; throws naming the file.
  DevSet ReadDev() const;

 private:
  std::string directory_;
  nlohmann::json manifest_;
  CorpusVocabularies vocabularies_;
  std::vector<std::string> shard_paths_;
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_PREPARED_CORPUS_H_
