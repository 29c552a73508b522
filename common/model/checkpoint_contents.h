#ifndef FANYI_COMMON_MODEL_CHECKPOINT_CONTENTS_H_
#define FANYI_COMMON_MODEL_CHECKPOINT_CONTENTS_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/model/length_normalization.h"
#include "common/model/model_config.h"
#include "common/model/transformer.h"
#include "common/text/subword_model.h"
#include "common/text/tokenizer.h"
#include "common/text/vocabulary.h"

namespace fanyi {

// Version of the checkpoint directory layout; bumped on incompatible change.
// 2 added the subword models; version 1 checkpoints (words and characters)
// still load.
inline constexpr int kCheckpointFormatVersion = 2;
inline constexpr int kOldestCheckpointFormatVersion = 1;

// Everything a checkpoint directory holds:
//   model.pt            weights, torch::save format (torch.jit.load opens it)
//   config.json         format version, model config, languages, provenance
//   src_vocab.json      source vocabulary
//   tgt_vocab.json      target vocabulary
//   src_subwords.model  the source side's SentencePiece model, if it has one
//   tgt_subwords.model  the target side's, if it has one
struct Checkpoint {
  std::string model_version;    // Identifies this model in responses/metrics.
  std::string source_language;  // e.g. "en"; picks the source tokenizer.
  std::string target_language;  // e.g. "zh"; picks the target tokenizer.
  // The script the trainer wrote a Chinese side in ("simplified"), or ""
  // when it kept the corpus as it was (checkpoints from before the field).
  // A source converted in training is converted before translating.
  std::string source_script;
  std::string target_script;
  // Whether each side's word-mode tokenizer lowercases; checkpoints from
  // before these fields lowercased both.
  WordCase source_case = WordCase::kLower;
  WordCase target_case = WordCase::kLower;
  // The longest training source in tokens; 0 when unknown. Longer sentences
  // are translated in clauses.
  int64_t longest_source_tokens = 0;
  // Target tokens per source token of the training pairs with at least 5
  // source tokens: the 0.5th and 99.5th percentiles; high 0 when unknown
  // (fewer than 1,000 such pairs). A translation outside them is taken as
  // broken (OutputGuard).
  double target_ratio_low = 0;
  double target_ratio_high = 0;
  // The GNMT length penalty α its beam search decodes with: the one the
  // trainer found best on dev; 1.0 (what every model used before) for
  // checkpoints from before the field.
  double length_penalty = 1.0;
  // How beam search weighs lengths with it: GNMT's for fanyi's models,
  // CTranslate2's for the models imported from it ("length_normalization":
  // "gnmt" or "ctranslate2"; gnmt when absent).
  LengthNormalization length_normalization = LengthNormalization::kGnmt;
  // Target tokens every translation starts with, forced after <s> and left
  // out of the text (EncodedSource::target_prefix): the target language's
  // token of a multilingual model, such as an Argos package's target_prefix
  // ("target_prefix": a list of target vocabulary tokens; none when absent).
  std::vector<std::string> target_prefix;
  // Source tokens every source starts with (a multilingual model's source
  // language token: M2M-100's "__en__", NLLB's "eng_Latn"; "source_prefix",
  // source vocabulary tokens; none when absent).
  std::vector<std::string> source_prefix;
  // Start as the four specials only (a vocabulary built from no data).
  Vocabulary source_vocabulary = Vocabulary::Build({}, 1, 0);
  Vocabulary target_vocabulary = Vocabulary::Build({}, 1, 0);
  // Each side's subword model (Tokenizer's subword mode), or null for words
  // (characters for Chinese).
  std::shared_ptr<const SubwordModel> source_subwords;
  std::shared_ptr<const SubwordModel> target_subwords;
  Transformer model{nullptr};
  nlohmann::json training = nlohmann::json::object();  // Provenance.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CHECKPOINT_CONTENTS_H_
