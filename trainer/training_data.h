#ifndef FANYI_TRAINER_TRAINING_DATA_H_
#define FANYI_TRAINER_TRAINING_DATA_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>

#include "common/model/checkpoint.h"
#include "trainer/corpus_preparation.h"
#include "trainer/data_parallel.h"
#include "trainer/prepared_corpus.h"
#include "trainer/training_options.h"

namespace fanyi {

// Where a rank other than 0, running as process `pid`, prepares its copy of
// the corpus. TrainingData removes it; a rank killed before it could is
// cleaned up after by the command that started it (RunLocalRanks).
std::filesystem::path RankScratchDirectory(int rank, int64_t pid);

// The corpus a run trains and validates on, opened the same way on every
// rank: options.data_dir as fanyi-prepare wrote it, or options.corpus's
// raw text prepared into out_dir/data/ (on ranks other than 0, into a
// scratch directory of their own, removed with this object).
class TrainingData {
 public:
  // Opens the corpus; `group` is null when training alone. With `fixed`
  // (a resumed run's vocabularies) the corpus is prepared with them, or
  // the one prepared before reused, and refused if it holds others. Throws
  // std::runtime_error when the corpus does not fit `options.model`.
  TrainingData(const TrainingOptions& options, DataParallel* group,
               const CorpusVocabularies* fixed, std::ostream& log);
  ~TrainingData();
  TrainingData(const TrainingData&) = delete;
  TrainingData& operator=(const TrainingData&) = delete;

  const PreparedCorpus& corpus() const { return *corpus_; }
  const DevSet& dev() const { return dev_; }

  // Writes what a model trained on this corpus must carry into
  // `checkpoint`: the vocabularies, and the languages, scripts and cases.
  void Describe(Checkpoint* checkpoint) const;

 private:
  // The constructor's work: opens or prepares the corpus, checks it, and
  // reads the dev set.
  void Open(const TrainingOptions& options, const CorpusVocabularies* fixed,
            std::ostream& log);
  void RemoveScratchDirectory();
  // Prepares options.corpus into `directory` with rank 0's vocabularies
  // (or `fixed`'s) on every rank.
  PreparedCorpus PrepareRawText(const TrainingOptions& options,
                                const std::filesystem::path& directory,
                                const CorpusVocabularies* fixed,
                                std::ostream& log);
  bool leads() const { return !group_ || group_->rank() == 0; }

  DataParallel* group_;
  std::filesystem::path scratch_dir_;  // Empty on rank 0.
  std::optional<PreparedCorpus> corpus_;
  DevSet dev_;
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_TRAINING_DATA_H_
