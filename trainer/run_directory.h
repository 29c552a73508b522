#ifndef FANYI_TRAINER_RUN_DIRECTORY_H_
#define FANYI_TRAINER_RUN_DIRECTORY_H_

#include <torch/optim/adam.h>

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "common/model/checkpoint.h"
#include "trainer/prepared_corpus.h"

namespace fanyi {

// The saves of one training run in its output directory, written and read
// back: last/ (with the optimizer state, for --resume), best/ (highest dev
// BLEU), epochs/ (the newest saves, named step-N, kept for averaging) and
// averaged/.
class RunDirectory {
 public:
  // `kept_saves`: how many saves epochs/ keeps (TrainingOptions::
  // average_last).
  RunDirectory(std::string out_dir, int64_t kept_saves);

  std::string last() const { return (out_ / "last").string(); }
  std::string best() const { return (out_ / "best").string(); }
  std::string averaged() const { return (out_ / "averaged").string(); }

  // Whether a run continues the one here (`resume` with a last/ here). A
  // run never starts afresh over another one's saves: that would overwrite
  // the served best/ after its first epoch and average the old run's
  // epochs/ with its own. Throws std::runtime_error, changing nothing, when
  // the directory holds a run and `resume` is false, or holds saves but no
  // last/ to resume from.
  bool HoldsRunToResume(bool resume, std::ostream& log) const;

  // The saves in epochs/ (complete ones only, not a save's .tmp staging
  // directory), oldest first. Saves are named step-N (N zero-padded, so the
  // names sort by step); runs from before step saves named them epoch-K,
  // which sort first: they are older than any step-N beside them.
  std::vector<std::string> KeptSaves() const;

  // The version name of a model this run trains: --out's name and the
  // time now (UTC), as "en-zh-20261126T051500".
  std::string NewModelVersion() const;

  // The best dev BLEU of the run's saves so far: -1 before the first, and
  // what last/ recorded once LoadLast has read it.
  double best_dev_bleu() const { return best_dev_bleu_; }

  // last/ on `device`, to resume from: the model, its vocabularies and its
  // training record, whose best dev BLEU becomes this run's.
  Checkpoint LoadLast(torch::Device device);
  // last/'s optimizer state into `optimizer`, onto `device` (the moments of
  // a CPU save resume on a GPU too).
  void LoadOptimizer(torch::optim::Adam& optimizer, torch::Device device) const;

  // Saves `checkpoint` as last/ with `optimizer`'s state, as best/ when
  // `dev_bleu` beats every save before it, and as epochs/step-`step` when
  // saves are kept (dropping all but the newest there); its training
  // record gets the run's best dev BLEU first. Returns whether it became
  // best/.
  bool Save(Checkpoint& checkpoint, torch::optim::Adam& optimizer,
            double dev_bleu, int64_t step);

  // Averages the saves in epochs/ into averaged/, scores it on `dev` (on
  // `device`) and makes it best/ when it beats the best single save,
  // logging what it did. Nothing while fewer than two saves are kept.
  void AverageKeptSaves(const DevSet& dev, torch::Device device,
                        std::ostream& log);

 private:
  const std::filesystem::path out_;
  const int64_t kept_saves_;
  double best_dev_bleu_ = -1;
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_RUN_DIRECTORY_H_
