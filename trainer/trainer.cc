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
#include "trainer/training_log.h"
#include "trainer/training_run.h"

namespace fanyi {

Trainer::Trainer(TrainingOptions options) : options_(std::move(options)) {
  options_.Validate();
  options_.model.source_vocab_size = 5;  // Placeholders until data is read.
  options_.model.target_vocab_size = 5;
  options_.model.Validate();
}

Trainer::~Trainer() = default;

TrainingResult Trainer::Run(std::ostream& log) {
  TrainingRun run{options_, log};
  torch::set_num_threads(options_.threads > 0 ? options_.threads
                                              : CoresGiven());
  torch::manual_seed(options_.seed);
  run.device = ResolveDevice(options_.device);
  if (options_.device == "auto" && run.device.is_cpu()) {
    log << "--device=auto: no CUDA device is visible, training on the CPU\n";
  }
  if (options_.rendezvous.world_size > 1) {
    run.group = std::make_unique<DataParallel>(
        options_.rendezvous, run.device,
        std::chrono::milliseconds(
            static_cast<int64_t>(options_.collective_timeout_minutes * 60000)));
    run.device = run.group->device();  // On CUDA, this rank's GPU.
    log << "rank " << run.group->rank() << " of " << run.group->world_size()
        << " joined at " << options_.rendezvous.master_address << ":"
        << options_.rendezvous.master_port << " (" << run.group->backend()
        << ", " << run.device.str() << ")\n";
  }
  const bool resuming =
      run.run_directory.HoldsRunToResume(options_.resume, log);
  if (run.group && run.group->Sum(resuming ? 1 : 0) !=
                       (resuming ? run.group->world_size() : 0)) {
    throw std::runtime_error(
        "the ranks disagree on resuming: every rank must see the same --out "
        "(shared storage) holding last/");
  }
  if (run.leads()) {
    CreateWritableDirectory(options_.out_dir);
    run.training_log.OpenRecords(options_.out_dir);
  }
  run.checkpoint.model_version = run.run_directory.NewModelVersion();

  run.options.resume = resuming;  // From here on: this run resumes.
  if (resuming) {
    run.Resume();
  } else {
    run.Start();
  }
  if (run.group) {
    // The same starting weights on every rank; then each rank its own
    // dropout.
    torch::NoGradGuard no_grad;
    run.group->CopyFromFirstRank(run.checkpoint.model->parameters());
    torch::manual_seed(options_.seed + 1000003 * run.group->rank());
  }
  run.result.best_dev_bleu = std::max(run.run_directory.best_dev_bleu(), 0.0);
  run.window = ReportWindow();
  while (!run.StopNow() &&
         (options_.max_steps == 0 || run.position.step < options_.max_steps)) {
    if (run.position.epoch_complete) {
      if (run.position.epoch >= options_.epochs) break;
      ++run.position.epoch;
      run.position.epoch_complete = false;
      run.StartEpochBatches(0);
    }
    const TrainingRun::Pause pause = run.TrainUntilPause();
    const bool last =
        pause == TrainingRun::Pause::kBudget ||
        pause == TrainingRun::Pause::kMaxSteps ||
        (pause == TrainingRun::Pause::kEpochEnd &&
         (run.position.epoch == options_.epochs || run.StopNow()));
    const bool report =
        last || pause == TrainingRun::Pause::kStepReport ||
        (pause == TrainingRun::Pause::kEpochEnd &&
         run.position.epoch % options_.validate_every_epochs == 0);
    if (report) {
      run.Report();
      run.window = ReportWindow();
    }
    if (last) break;
  }
  if (options_.average_last > 1 && run.leads()) {
    run.run_directory.AverageKeptSaves(run.data->dev(), run.device, log);
    run.result.best_dev_bleu = run.run_directory.best_dev_bleu();
  }
  if (!options_.length_penalties.empty()) run.ChooseBestLengthPenalty();
  run.result.best_checkpoint = run.run_directory.best();
  return run.result;
}

}  // namespace fanyi
