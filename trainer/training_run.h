// The state a training run holds between its steps (TrainingRun), and the
// steps themselves: starting or resuming, training until a pause,
// validating, saving, choosing best/'s length penalty. Trainer::Run drives
// them.
#ifndef FANYI_TRAINER_TRAINING_RUN_H_
#define FANYI_TRAINER_TRAINING_RUN_H_

#include <torch/optim/adam.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>

#include "common/model/checkpoint.h"
#include "trainer/data_parallel.h"
#include "trainer/prepared_corpus.h"
#include "trainer/run_directory.h"
#include "trainer/training_batches.h"
#include "trainer/training_data.h"
#include "trainer/training_log.h"
#include "trainer/training_options.h"
#include "trainer/training_record.h"

namespace fanyi {

// Everything a run holds between its steps.
struct TrainingRun {
  // Why training paused.
  enum class Pause {
    kEpochEnd,    // The epoch's batches are done.
    kStepReport,  // validate_every_steps steps since the last report.
    kMaxSteps,    // max_steps reached.
    kBudget,      // max_minutes spent.
  };
  using Clock = std::chrono::steady_clock;

  TrainingOptions options;
  std::ostream& log;
  // last/, best/, epochs/ and averaged/ in options.out_dir, and the best
  // dev BLEU of their saves.
  RunDirectory run_directory{options.out_dir, options.average_last};
  torch::Device device{torch::kCPU};
  Checkpoint checkpoint;  // Model, vocabularies and provenance.
  std::optional<TrainingData> data;
  // This epoch's batches; empty between epochs.
  std::optional<TrainingBatches> batches;
  std::unique_ptr<torch::optim::Adam> optimizer;
  // The other ranks of a data-parallel run; null when training alone.
  std::unique_ptr<DataParallel> group;
  TrainingLog training_log{options.show_progress, log};
  TrainingPosition position;
  Clock::time_point start = Clock::now();
  double resumed_seconds = 0;  // Training time spent before a resume.
  ReportWindow window;         // Since the last report.
  bool first_step_logged = false;
  TrainingResult result;

  double ElapsedSeconds() const {
    return resumed_seconds +
           std::chrono::duration<double>(Clock::now() - start).count();
  }
  // Rank 0 (or the only rank): the one that saves and logs.
  bool leads() const { return !group || group->rank() == 0; }
  // Whether to stop now: the budget is spent, as rank 0's clock says, so
  // that every rank stops at the same step. A collective when there are
  // other ranks: every rank calls it at the same points.
  bool StopNow() {
    const bool over = leads() && OverBudget();
    return group ? group->Sum(over ? 1.0 : 0.0) > 0 : over;
  }
  bool OverBudget() const {
    return options.max_minutes > 0 &&
           ElapsedSeconds() >= options.max_minutes * 60.0;
  }

  // Opens the corpus (with `fixed`'s vocabularies when resuming) and
  // describes it in the checkpoint.
  void OpenData(const CorpusVocabularies* fixed);
  // Trains `model` from here: moved to the device, given a new optimizer;
  // logs its shape.
  void AdoptModel(Transformer model);
  // A new run: its data and model, the model started from
  // options.init_from when it is given.
  void Start();
  void Resume();
  // Starts the next epoch's batches, or this one's again after `skip`
  // batches (a resumed run).
  void StartEpochBatches(int64_t skip);
  // Trains until the epoch ends, a report is due or training must stop.
  Pause TrainUntilPause();
  EpochReport Validate();
  // Saves the model with its training record (run_directory.Save).
  void Save(const EpochReport& report);
  // Validates (every rank, each its share of the dev set); rank 0 saves
  // and logs the report.
  void Report();
  // Updates the progress line; also appends a progress record if
  // `record`.
  void ShowProgress(double lr, bool record);
  // Chooses best/'s length penalty on dev (options.length_penalties): every
  // rank decodes its share with best/'s weights, in the server's default
  // decoding step; rank 0 rewrites best/ with the chosen α. Ends training:
  // the model holds best/'s weights after it.
  void ChooseBestLengthPenalty();
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_TRAINING_RUN_H_
