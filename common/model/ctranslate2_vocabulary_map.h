#ifndef FANYI_COMMON_MODEL_CTRANSLATE2_VOCABULARY_MAP_H_
#define FANYI_COMMON_MODEL_CTRANSLATE2_VOCABULARY_MAP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/model/ctranslate2_directory.h"

namespace fanyi {

// One side's vocabulary in fanyi's order and where each id's row comes
// from.
struct Ct2VocabularyMap {
  std::vector<std::string> tokens;
  std::vector<int64_t> rows;   // Per fanyi id: CTranslate2's row, -1: zeros.
  std::vector<int64_t> added;  // The fanyi ids of rows fanyi adds.
};

// The target side: a padding row added, the model's unk, its start token
// (a row of its own when it is a token of its own, else an added copy, or
// zeros for a zero first embedding), its eos. Errors name the vocabulary
// `name`.
Ct2VocabularyMap MapCt2Target(const Ct2Directory& directory,
                              const std::string& name);

// The source side: a padding row added, the model's unk, and its bos and
// eos tokens where the vocabulary has them (zero rows where it has not).
// Errors name the vocabulary `name`.
Ct2VocabularyMap MapCt2Source(const Ct2Directory& directory,
                              const std::string& name);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CTRANSLATE2_VOCABULARY_MAP_H_
