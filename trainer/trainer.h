#ifndef FANYI_TRAINER_TRAINER_H_
#define FANYI_TRAINER_TRAINER_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "trainer/training_log.h"
#include "trainer/training_options.h"

namespace fanyi {

// What a run produced.
struct TrainingResult {
  std::vector<EpochReport> epochs;
  double best_dev_bleu = 0;
  std::string best_checkpoint;      // Directory of the best checkpoint.
  std::string last_checkpoint;      // Directory of the last checkpoint.
  double length_penalty = 1.0;      // The α best/ decodes beam search with.
  int64_t skipped_train_lines = 0;  // Bad input lines that were skipped.
};

// Trains a Transformer on a parallel corpus and writes checkpoints.
class Trainer {
 public:
  explicit Trainer(TrainingOptions options);
  ~Trainer();

  // Runs the whole job; `log` gets human-readable progress. Throws on
  // unrecoverable errors (unreadable files, no usable pairs).
  TrainingResult Run(std::ostream& log);

 private:
  struct State;
  TrainingOptions options_;
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_TRAINER_H_
