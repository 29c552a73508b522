// SentencePiece subword models: read from SentencePiece's model files and
// applied to text.
#ifndef FANYI_COMMON_TEXT_SUBWORD_MODEL_H_
#define FANYI_COMMON_TEXT_SUBWORD_MODEL_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/text/charsmap_normalizer.h"

namespace fanyi {

// A unigram SentencePiece model (Kudo, 2018; Kudo and Richardson, 2018):
// text to subword pieces by the most probable segmentation of each word, and
// back; or a BPE one (Sennrich et al., 2016), whose pieces come from merging
// a word's characters in the order training learned the merges. Fanyi maps
// pieces to ids with its own Vocabulary, as it does words, so the model only
// splits text.
//
// The model is read from a SentencePiece model file (a serialized
// ModelProto), written by SentencePiece's trainer (trainer/
// subword_training.h). Encoding is implemented here rather than by linking
// Debian's libsentencepiece: that library carries its own copy of protobuf
// 3.14 with its symbols exported, and any process that also loads the
// system's protobuf 3.21 (LibTorch and gRPC do) crashes at start-up when
// the two copies interpose. A model's text normalization is applied as
// SentencePiece applies it: its precompiled character map (CharsMapNormalizer;
// "nmt_nfkc", spm_train's default, and the other NFKC rules) when it has
// one, spaces only for the "identity" rule, which fanyi's trainer uses (the
// Tokenizer normalizes text itself). Encode equals SentencePiece's own
// encoder (subword_model_test compares them).
//
// Immutable once built; thread-safe.
class SubwordModel {
 public:
  // Reads a model file's bytes; throws std::invalid_argument naming what is
  // wrong when they are not a unigram or BPE model with SentencePiece's
  // default whitespace handling.
  static SubwordModel FromSerialized(std::string serialized);

  // The pieces of `text`: normalized by the model's map, if any, then
  // space-separated words, each starting with "▁"
  // (U+2581), cut into the segmentation with the highest total score
  // (unigram) or merged (BPE). Runs of characters no piece covers become
  // one piece, as in SentencePiece
  // (the Vocabulary maps it to <unk>). With `continues_word`, text that
  // does not start with a space continues a word begun before it (after a
  // placeholder): its first word gets no "▁".
  std::vector<std::string> Encode(std::string_view text,
                                  bool continues_word = false) const;

  // The text of `pieces`: concatenated, "▁" read as a space, the leading
  // space dropped.
  static std::string Decode(const std::vector<std::string>& pieces);

  // Whether Encode normalizes text by the model's own map (SentencePiece's
  // NFKC rules), so that callers should hand it text as it came.
  bool normalizes() const { return normalizer_ != nullptr; }

  // Pieces in the model.
  int size() const { return static_cast<int>(scores_.size()); }

  // The bytes FromSerialized read.
  const std::string& serialized() const { return serialized_; }

 private:
  SubwordModel() = default;

  // Appends the pieces of one word ("▁" included) to `pieces`. A unigram
  // search starts from `*path_score`, the best score of the text before the
  // word, and leaves the score after it there.
  void EncodeWord(std::string_view word, std::vector<std::string>* pieces,
                  float* path_score) const;
  // The same for a BPE model: the word's characters, with the adjacent pair
  // whose joint text is the highest-scoring piece merged until none is.
  void EncodeWordByMerges(std::string_view word,
                          std::vector<std::string>* pieces) const;

  std::string serialized_;
  std::unordered_map<std::string, float> scores_;  // Piece -> log prob.
  size_t longest_piece_ = 0;                       // In bytes.
  float unknown_score_ = 0;  // Of a character no piece covers.
  bool bpe_ = false;         // A BPE model (else unigram).
  // The model's normalization map; null for the identity rule.
  std::shared_ptr<const CharsMapNormalizer> normalizer_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_SUBWORD_MODEL_H_
