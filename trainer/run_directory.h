#ifndef FANYI_TRAINER_RUN_DIRECTORY_H_
#define FANYI_TRAINER_RUN_DIRECTORY_H_

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "common/model/checkpoint.h"

namespace fanyi {

// The saves of one training run in its output directory: last/ (with the
// optimizer state, for --resume), best/ (highest dev BLEU), epochs/ (the
// newest saves, named step-N, kept for averaging) and averaged/.
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

  // Saves `checkpoint` as epochs/step-`step` and drops all but the newest
  // kept_saves there.
  void Keep(const Checkpoint& checkpoint, int64_t step) const;

 private:
  const std::filesystem::path out_;
  const int64_t kept_saves_;
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_RUN_DIRECTORY_H_
