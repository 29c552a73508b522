// The flags that fanyi-train and fanyi-prepare share: how a corpus is read,
// normalized and tokenized.
#ifndef FANYI_TRAINER_PREPARATION_FLAGS_H_
#define FANYI_TRAINER_PREPARATION_FLAGS_H_

#include "trainer/corpus_preparation.h"

namespace fanyi {

// PreparationOptions from --train, --dev, --source_language,
// --target_language, --source_script, --target_script, --placeholders,
// --source_subwords,
// --target_subwords, --subword_type, --vocab_min_count and --vocab_max_size;
// max_tokens, shard_pairs and threads keep their defaults (each program sets
// its own).
PreparationOptions PreparationOptionsFromFlags();

}  // namespace fanyi

#endif  // FANYI_TRAINER_PREPARATION_FLAGS_H_
