#include "trainer/trainer.h"

#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>

#include "common/model/cpu_threading.h"
#include "common/model/device.h"
#include "trainer/data_parallel.h"
#include "trainer/output_directory.h"
#include "trainer/trainer_state.h"
#include "trainer/training_log.h"

namespace fanyi {

Trainer::Trainer(TrainingOptions options) : options_(std::move(options)) {
  options_.Validate();
  options_.model.source_vocab_size = 5;  // Placeholders until data is read.
  options_.model.target_vocab_size = 5;
  options_.model.Validate();
}

Trainer::~Trainer() = default;

TrainingResult Trainer::Run(std::ostream& log) {
  State state{options_, log};
  torch::set_num_threads(options_.threads > 0 ? options_.threads
                                              : CoresGiven());
  torch::manual_seed(options_.seed);
  state.device = ResolveDevice(options_.device);
  if (options_.rendezvous.world_size > 1) {
    state.group = std::make_unique<DataParallel>(
        options_.rendezvous, state.device,
        std::chrono::milliseconds(
            static_cast<int64_t>(options_.collective_timeout_minutes * 60000)));
    state.device = state.group->device();  // On CUDA, this rank's GPU.
    log << "rank " << state.group->rank() << " of " << state.group->world_size()
        << " joined at " << options_.rendezvous.master_address << ":"
        << options_.rendezvous.master_port << " (" << state.group->backend()
        << ", " << state.device.str() << ")\n";
  }
  const bool resuming =
      state.run_directory.HoldsRunToResume(options_.resume, log);
  if (state.group && state.group->Sum(resuming ? 1 : 0) !=
                         (resuming ? state.group->world_size() : 0)) {
    throw std::runtime_error(
        "the ranks disagree on resuming: every rank must see the same --out "
        "(shared storage) holding last/");
  }
  if (state.leads()) {
    CreateWritableDirectory(options_.out_dir);
    state.training_log.OpenRecords(options_.out_dir);
  }
  state.checkpoint.model_version = state.run_directory.NewModelVersion();

  state.options.resume = resuming;  // From here on: this run resumes.
  if (resuming) {
    state.Resume();
  } else {
    state.Start();
  }
  if (state.group) {
    // The same starting weights on every rank; then each rank its own
    // dropout.
    torch::NoGradGuard no_grad;
    state.group->CopyFromFirstRank(state.checkpoint.model->parameters());
    torch::manual_seed(options_.seed + 1000003 * state.group->rank());
  }
  state.result.best_dev_bleu =
      std::max(state.run_directory.best_dev_bleu(), 0.0);
  state.window = ReportWindow();
  while (!state.StopNow() && (options_.max_steps == 0 ||
                              state.position.step < options_.max_steps)) {
    if (state.position.epoch_complete) {
      if (state.position.epoch >= options_.epochs) break;
      ++state.position.epoch;
      state.position.epoch_complete = false;
      state.StartEpochBatches(0);
    }
    const State::Pause pause = state.TrainUntilPause();
    const bool last =
        pause == State::Pause::kBudget || pause == State::Pause::kMaxSteps ||
        (pause == State::Pause::kEpochEnd &&
         (state.position.epoch == options_.epochs || state.StopNow()));
    const bool report =
        last || pause == State::Pause::kStepReport ||
        (pause == State::Pause::kEpochEnd &&
         state.position.epoch % options_.validate_every_epochs == 0);
    if (report) {
      state.Report();
      state.window = ReportWindow();
    }
    if (last) break;
  }
  if (options_.average_last > 1 && state.leads()) {
    state.run_directory.AverageKeptSaves(state.data->dev(), state.device, log);
    state.result.best_dev_bleu = state.run_directory.best_dev_bleu();
  }
  if (!options_.length_penalties.empty()) state.ChooseBestLengthPenalty();
  state.result.best_checkpoint = state.run_directory.best();
  return state.result;
}

}  // namespace fanyi
