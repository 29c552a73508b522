// Training SentencePiece subword models for the trainer's vocabularies.
#ifndef FANYI_TRAINER_SUBWORD_TRAINING_H_
#define FANYI_TRAINER_SUBWORD_TRAINING_H_

#include <string>
#include <vector>

#include "common/text/subword_model.h"

namespace fanyi {

// How TrainSubwordModel builds a model.
struct SubwordTrainingOptions {
  int vocab_size = 8000;  // Pieces at most, SentencePiece's <unk> included;
                          // a small corpus may give fewer.
  std::string model_type = "unigram";  // "unigram" or "bpe".
  // Share of the characters the pieces must cover; rarer ones become
  // unknown. 1.0 keeps every character seen (for Chinese, whose rare
  // characters are mostly names); SentencePiece suggests 0.9995 for large
  // character sets on large corpora.
  double character_coverage = 1.0;
  // Sentences SentencePiece samples to train on (its input_sentence_size):
  // its memory grows with them. 0 = all.
  int max_sentences = 2000000;
  std::string spm_train = "spm_train";  // The trainer program (PATH).
};

// Trains a unigram or BPE SentencePiece model on `sentences` (one line each)
// with SentencePiece's own trainer, `spm_train` from Debian's `sentencepiece`
// package, run as a child process (its library cannot share a process with
// the system's protobuf; see SubwordModel). Works in `work_dir`, which must
// exist, and removes its files there. Throws std::invalid_argument for bad
// options and std::runtime_error, with the end of spm_train's log, when
// training fails.
SubwordModel TrainSubwordModel(const std::vector<std::string>& sentences,
                               const SubwordTrainingOptions& options,
                               const std::string& work_dir);

}  // namespace fanyi

#endif  // FANYI_TRAINER_SUBWORD_TRAINING_H_
