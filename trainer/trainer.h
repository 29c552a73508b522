#ifndef FANYI_TRAINER_TRAINER_H_
#define FANYI_TRAINER_TRAINER_H_

#include <ostream>
#include <string>

#include "trainer/training_log.h"
#include "trainer/training_options.h"

namespace fanyi {

// Trains a Transformer on a parallel corpus and writes checkpoints.
class Trainer {
 public:
  explicit Trainer(TrainingOptions options);
  ~Trainer();

  // Runs the whole job; `log` gets human-readable progress. Throws on
  // unrecoverable errors (unreadable files, no usable pairs).
  TrainingResult Run(std::ostream& log);

 private:
  TrainingOptions options_;
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_TRAINER_H_
