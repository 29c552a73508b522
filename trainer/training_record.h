// The "training" section of a checkpoint: where the run stood and how it
// trained, written at each save and read back by a resumed run.
#ifndef FANYI_TRAINER_TRAINING_RECORD_H_
#define FANYI_TRAINER_TRAINING_RECORD_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "trainer/prepared_corpus.h"
#include "trainer/training_log.h"
#include "trainer/training_options.h"

namespace fanyi {

// Where a run stands between its steps: what a resumed run goes on from.
struct TrainingPosition {
  int64_t epoch = 0;           // The epoch under way or last ended; 1-based.
  int64_t step = 0;            // Optimizer steps taken.
  bool epoch_complete = true;  // Whether `epoch` has ended.
  int64_t epoch_batches = 0;   // Batches of `epoch` trained, every rank's.
};

// The record of a save: `position`, `report`'s dev scores and training
// time, the options that shaped training, and the files `corpus` was
// prepared from.
nlohmann::json TrainingRecord(const TrainingPosition& position,
                              const EpochReport& report,
                              const TrainingOptions& options,
                              const PreparedCorpus& corpus, int world_size);

// The position a record gives. Records from before step reports (all saved
// at epoch ends) read as a complete epoch. Throws std::runtime_error naming
// `checkpoint_dir` when the record lacks its epoch or step.
TrainingPosition ReadTrainingPosition(const nlohmann::json& record,
                                      const std::string& checkpoint_dir);

}  // namespace fanyi

#endif  // FANYI_TRAINER_TRAINING_RECORD_H_
