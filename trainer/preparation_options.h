#ifndef FANYI_TRAINER_PREPARATION_OPTIONS_H_
#define FANYI_TRAINER_PREPARATION_OPTIONS_H_

#include <cstdint>
#include <string>

#include "common/text/parallel_corpus.h"
#include "common/text/tokenizer.h"

namespace fanyi {

// How a corpus is prepared; validated by PrepareCorpus.
struct PreparationOptions {
  // Comma-separated corpus files or directories (CorpusFiles in
  // corpus_sources.h): TSV of source<TAB>target pairs, gettext catalogs.
  std::string train_path;
  // Users' suggestions (a SQLite file, suggestion_store.h) trained on
  // besides, each read suggestion_repeats times (1 to 1000); empty: none.
  std::string suggestions_path;
  int suggestion_repeats = 10;
  std::string dev_path;  // For validation, in the same forms; required.
  // The columns of both files that hold the source and the target: swapped,
  // one corpus trains the other direction.
  TsvColumns columns;
  std::string source_language = "en";  // Picks the source tokenizer.
  std::string target_language = "zh";  // Picks the target tokenizer.
  // Word-mode sides only (not characters, not subwords): the source is
  // lowercased, so that "The" and "the" share what they learn; the target
  // keeps its case, since people read it.
  WordCase source_case = WordCase::kLower;
  WordCase target_case = WordCase::kKeep;
  // The script a Chinese side is normalized to before training:
  // "simplified" (OpenCC), or "keep" to train on the corpus as it is. A
  // Chinese source normalized here is normalized again when translated.
  std::string source_script = "simplified";
  std::string target_script = "simplified";
  // Replace numbers, codes, URLs and copied Latin words that both sides of
  // a pair share with placeholders (text/placeholders.h), so that the model
  // learns to carry them across.
  bool placeholders = true;
  // SentencePiece subword vocabularies (trainer/subword_training.h): the
  // pieces of a unigram model trained on each side's training text, cased;
  // 0 = words for the source side and characters for Chinese.
  int source_subwords = 0;
  int target_subwords = 0;
  std::string subword_type = "unigram";  // Of both sides: unigram or bpe.
  // Train on both directions of every pair: each is written once as it is
  // and once reversed (its target as the source), and one vocabulary of
  // both sides' tokens serves as source and target vocabulary. The first
  // stage of bidirectional training (Ding et al., 2021, docs/quality.md):
  // a run started from such a model (TrainingOptions::init_from) then
  // fine-tunes on the one direction. Each language keeps its own tokenizer,
  // wherever it stands; the dev set stays in the one direction. Words and
  // characters only (no subwords).
  bool bidirectional = false;
  // Rarer tokens become <unk>; 2 so that <unk> itself is trained (words seen
  // once stand for the words a user sends that training never saw).
  int64_t vocab_min_count = 2;
  int64_t vocab_max_size = 0;  // Including specials; 0 = unlimited.
  // Training pairs with more tokens on a side are left out (the model's
  // position table must hold them and </s>); dev pairs are cut to it.
  int64_t max_tokens = 255;
  int64_t shard_pairs = 100000;  // Training pairs per shard file.
  int threads = 0;               // Tokenizing threads; 0 = all cores.

  // Throws std::invalid_argument naming the first bad field.
  void Validate() const;
  // What is read for training: train_path, then suggestions_path
  // suggestion_repeats times.
  std::string TrainingFiles() const;
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_PREPARATION_OPTIONS_H_
