// Preparing a parallel TSV for training: read once more per pass in chunks,
// normalized and tokenized on every core, written as id shards. Memory stays
// bounded whatever the corpus size (docs/design.md, "Corpora of millions").
#ifndef FANYI_TRAINER_CORPUS_PREPARATION_H_
#define FANYI_TRAINER_CORPUS_PREPARATION_H_

#include <ostream>
#include <string>

#include "trainer/preparation_options.h"
#include "trainer/prepared_corpus.h"

namespace fanyi {

// Reads, normalizes and tokenizes `options`' corpus and writes it to
// `directory` as a PreparedCorpus, replacing what is there (the new one is
// written beside it and renamed into place). The vocabularies (and subword
// models) are built from the training data, or taken from `fixed` when it
// is given (a resumed run keeps its own). Bad lines are logged and skipped.
// Throws std::runtime_error naming the file on unreadable input or when no
// usable pair is left.
PreparedCorpus PrepareCorpus(const PreparationOptions& options,
                             const std::string& directory, std::ostream& log,
                             const CorpusVocabularies* fixed = nullptr);

}  // namespace fanyi

#endif  // FANYI_TRAINER_CORPUS_PREPARATION_H_
