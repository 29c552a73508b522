#include "trainer/training_run.h"

#include <torch/utils.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/decoding/decoder_selection.h"
#include "common/model/checkpoint.h"
#include "common/pipeline/translator.h"
#include "trainer/dev_evaluation.h"
#include "trainer/tensor_batch.h"
#include "trainer/training_options.h"
#include "trainer/training_record.h"
#include "trainer/weight_transfer.h"

namespace fanyi {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kLogEverySteps = 10;  // JSON progress records.

}  // namespace

void TrainingRun::OpenData(const CorpusVocabularies* fixed) {
  data.emplace(options, group.get(), fixed, log);
  data->Describe(&checkpoint);
  result.skipped_train_lines =
      data->corpus().manifest().value("skipped_lines", int64_t{0});
}

void TrainingRun::AdoptModel(Transformer model) {
  checkpoint.model = std::move(model);
  checkpoint.model->to(device);
  optimizer = std::make_unique<torch::optim::Adam>(
      checkpoint.model->parameters(),
      torch::optim::AdamOptions(0.0).betas({0.9, 0.98}).eps(1e-9));
  int64_t parameters = 0;
  for (const auto& p : checkpoint.model->parameters()) parameters += p.numel();
  const ModelConfig& config = checkpoint.model->config();
  log << "model: " << config.encoder_layers << "+" << config.decoder_layers
      << " layers, d_model " << config.d_model << ", d_ff " << config.d_ff
      << ", " << config.heads << " heads, " << parameters << " parameters, on "
      << device.str() << "\n";
}

void TrainingRun::Start() {
  std::optional<Checkpoint> initial;
  if (!options.init_from.empty()) {
    initial =
        LoadCheckpoint(ResolveCheckpointDirectory(options.init_from), device);
    // Its shape; this run's dropout.
    const double dropout = options.model.dropout;
    options.model = initial->model->config();
    options.model.dropout = dropout;
  }
  if (initial) {
    // Kept unless this run's corpus measures its own (OpenData).
    checkpoint.target_ratio_low = initial->target_ratio_low;
    checkpoint.target_ratio_high = initial->target_ratio_high;
  }
  // A model with subword models (one of fanyi's, or an imported Argos
  // package) goes on cutting text into its own pieces: its vocabularies and
  // subword models are kept, as a resumed run keeps them.
  std::optional<CorpusVocabularies> kept;
  if (initial && (initial->source_subwords || initial->target_subwords)) {
    kept.emplace();
    kept->source = initial->source_vocabulary;
    kept->target = initial->target_vocabulary;
    kept->source_subwords = initial->source_subwords;
    kept->target_subwords = initial->target_subwords;
  }
  OpenData(kept ? &*kept : nullptr);
  ModelConfig config = options.model;
  config.source_vocab_size = checkpoint.source_vocabulary.size();
  config.target_vocab_size = checkpoint.target_vocabulary.size();
  AdoptModel(Transformer(config));
  if (!initial) return;
  const WeightTransfer transfer = TransferWeights(*initial, checkpoint);
  log << "started from " << options.init_from << ": "
      << transfer.source_tokens_found << " of "
      << checkpoint.source_vocabulary.size() << " source and "
      << transfer.target_tokens_found << " of "
      << checkpoint.target_vocabulary.size() << " target tokens found\n";
}

void TrainingRun::Resume() {
  Checkpoint saved = run_directory.LoadLast(device);
  CorpusVocabularies vocabularies;
  vocabularies.source = saved.source_vocabulary;
  vocabularies.target = saved.target_vocabulary;
  vocabularies.source_subwords = saved.source_subwords;
  vocabularies.target_subwords = saved.target_subwords;
  options.model = saved.model->config();
  OpenData(&vocabularies);
  AdoptModel(saved.model);
  run_directory.LoadOptimizer(*optimizer, device);
  position = ReadTrainingPosition(saved.training, run_directory.last());
  resumed_seconds = saved.training.value("training_seconds", 0.0);
  if (!position.epoch_complete) StartEpochBatches(position.epoch_batches);
  log << "resumed from " << run_directory.last() << " at epoch "
      << position.epoch << ", step " << position.step
      << (position.epoch_complete
              ? ""
              : " (within the epoch, after " +
                    std::to_string(position.epoch_batches) + " batches)")
      << "\n";
}

void TrainingRun::StartEpochBatches(int64_t skip) {
  // The same seed on every rank and in a resumed run: the same batches.
  batches.emplace(data->corpus().shard_paths(), options.batch_tokens,
                  options.shuffle_window,
                  options.seed * 1000003 + position.epoch);
  TrainingBatch skipped;
  for (position.epoch_batches = 0; position.epoch_batches < skip;
       ++position.epoch_batches) {
    if (!batches->Next(&skipped, /*with_ids=*/false)) break;
  }
}

void TrainingRun::ShowProgress(double lr, bool record) {
  StepProgress progress;
  progress.epoch = position.epoch;
  progress.step = position.step;
  progress.loss = window.MeanLoss();
  progress.learning_rate = lr;
  progress.tokens_per_second = window.TokensPerSecond();
  progress.epoch_share =
      batches ? static_cast<double>(batches->pairs_read()) /
                    std::max<int64_t>(data->corpus().train_pairs(), 1)
              : 0.0;
  progress.eta_seconds =
      EtaSeconds(ElapsedSeconds(), options.max_minutes,
                 static_cast<double>(position.epoch - 1) + progress.epoch_share,
                 options.epochs);
  training_log.Progress(progress, record);
}

TrainingRun::Pause TrainingRun::TrainUntilPause() {
  const int64_t ranks = group ? group->world_size() : 1;
  const int64_t rank = group ? group->rank() : 0;
  checkpoint.model->train();
  const std::vector<torch::Tensor> parameters = checkpoint.model->parameters();
  std::vector<TrainingBatch> mine;
  while (true) {
    int64_t step_tokens = 0;
    const int64_t step_batches = batches->NextStep(
        options.accumulate_batches, ranks, rank, &mine, &step_tokens);
    if (step_batches == 0) {
      batches.reset();
      position.epoch_complete = true;
      training_log.EndProgressLine();
      return Pause::kEpochEnd;
    }
    position.epoch_batches += step_batches;
    ++position.step;
    const double lr = NoamLearningRate(position.step, options.model.d_model,
                                       options.warmup_steps, options.lr_factor);
    for (auto& param_group : optimizer->param_groups()) {
      static_cast<torch::optim::AdamOptions&>(param_group.options()).lr(lr);
    }
    optimizer->zero_grad();
    AccumulateGradients(*checkpoint.model, mine, step_tokens, options, device,
                        &window);
    window.trained_tokens += step_tokens;
    if (group) group->SumGradients(parameters);
    optimizer->step();
    if (!first_step_logged) {
      first_step_logged = true;
      log << "training: first step done " << ElapsedSeconds() - resumed_seconds
          << " s after start\n";
    }
    ShowProgress(lr, leads() && position.step % kLogEverySteps == 0);
    if (StopNow()) return Pause::kBudget;
    if (options.max_steps > 0 && position.step >= options.max_steps) {
      return Pause::kMaxSteps;
    }
    if (options.validate_every_steps > 0 &&
        position.step % options.validate_every_steps == 0) {
      return Pause::kStepReport;
    }
  }
}

EpochReport TrainingRun::Validate() {
  EpochReport report;
  report.epoch = position.epoch;
  report.step = position.step;
  report.train_loss = window.MeanLoss();
  report.tokens_per_second = window.TokensPerSecond();
  checkpoint.model->eval();
  report.dev_loss =
      DevLoss(*checkpoint.model, data->dev(), device, group.get());
  report.dev_bleu = DevBleu(checkpoint, data->dev(), group.get());
  report.elapsed_seconds = ElapsedSeconds();
  return report;
}

void TrainingRun::Save(const EpochReport& report) {
  checkpoint.training =
      TrainingRecord(position, report, options, data->corpus(),
                     group ? group->world_size() : 1);
  const bool best = run_directory.Save(checkpoint, *optimizer, report.dev_bleu,
                                       position.step);
  result.last_checkpoint = run_directory.last();
  if (best) result.best_checkpoint = run_directory.best();
}

void TrainingRun::Report() {
  EpochReport report = Validate();
  if (!leads()) return;
  Save(report);
  result.epochs.push_back(report);
  result.best_dev_bleu = run_directory.best_dev_bleu();
  training_log.Report(report, position.epoch_complete);
}

void TrainingRun::ChooseBestLengthPenalty() {
  const bool has_best =
      leads() && fs::exists(fs::path(run_directory.best()) / "config.json");
  if (!(group ? group->Sum(has_best ? 1.0 : 0.0) > 0 : has_best)) return;
  const double started = ElapsedSeconds();
  Checkpoint best;
  {
    torch::NoGradGuard no_grad;
    if (leads()) {
      best = LoadCheckpoint(run_directory.best(), device);
      const std::vector<torch::Tensor> weights = best.model->parameters();
      std::vector<torch::Tensor> mine = checkpoint.model->parameters();
      for (size_t i = 0; i < mine.size(); ++i) mine[i].copy_(weights[i]);
    }
    if (group) group->CopyFromFirstRank(checkpoint.model->parameters());
  }
  checkpoint.model->eval();
  const TranslatorOptions served;
  SelectDecoder(*checkpoint.model, served.cpu_decoder, served.compute_type);
  const LengthPenaltyChoice choice =
      ChooseLengthPenalty(checkpoint, data->dev(), options.length_penalties,
                          kLengthPenaltyBeam, group.get());
  if (!leads()) return;
  nlohmann::json trials = nlohmann::json::array();
  log << "length penalty on dev, beam " << kLengthPenaltyBeam << ":";
  for (const auto& [length_penalty, bleu] : choice.dev_bleu) {
    trials.push_back({{"length_penalty", length_penalty}, {"dev_bleu", bleu}});
    log << " " << std::defaultfloat << length_penalty << " -> " << std::fixed
        << std::setprecision(2) << bleu << std::setprecision(6);
  }
  best.length_penalty = choice.length_penalty;
  best.training["length_penalty_beam"] = kLengthPenaltyBeam;
  best.training["length_penalty_trials"] = std::move(trials);
  SaveCheckpoint(best, run_directory.best());
  result.length_penalty = choice.length_penalty;
  log << std::defaultfloat << "\nbest/ decodes beam search with length penalty "
      << choice.length_penalty << " (chosen in " << std::setprecision(3)
      << ElapsedSeconds() - started << std::setprecision(6) << " s)\n";
}

}  // namespace fanyi
