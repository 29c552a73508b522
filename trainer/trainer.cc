#include "trainer/trainer.h"

#include <torch/optim/adam.h>
#include <torch/serialize.h>
#include <torch/utils.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/model/checkpoint.h"
#include "common/model/checkpoint_averaging.h"
#include "common/model/device.h"
#include "common/text/vocabulary.h"
#include "trainer/data_parallel.h"
#include "trainer/dev_evaluation.h"
#include "trainer/output_directory.h"
#include "trainer/prepared_corpus.h"
#include "trainer/run_directory.h"
#include "trainer/tensor_batch.h"
#include "trainer/training_batches.h"

namespace fanyi {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kLogEverySteps = 10;  // JSON progress records.

std::string Timestamp() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%dT%H%M%S", std::gmtime(&now));
  return text;
}

}  // namespace

double NoamLearningRate(int64_t step, int64_t d_model, int64_t warmup_steps,
                        double factor) {
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  return factor * std::pow(static_cast<double>(d_model), -0.5) *
         std::min(std::pow(s, -0.5),
                  s * std::pow(static_cast<double>(warmup_steps), -1.5));
}

void TrainingOptions::Validate() const {
  auto require = [](bool condition, const std::string& message) {
    if (!condition) throw std::invalid_argument(message);
  };
  if (data_dir.empty()) {
    corpus.Validate();
  } else {
    require(corpus.train_path.empty() && corpus.dev_path.empty(),
            "--data replaces --train and --dev: give one or the other");
  }
  require(!out_dir.empty(), "--out is required");
  require(epochs >= 1, "--epochs must be at least 1");
  require(max_steps >= 0, "--max_steps must not be negative");
  require(max_minutes >= 0, "--max_minutes must not be negative");
  require(batch_tokens >= 1, "--batch_tokens must be at least 1");
  require(shuffle_window >= 1, "--shuffle_window must be at least 1");
  require(accumulate_batches >= 1, "--accumulate_batches must be at least 1");
  require(collective_timeout_minutes > 0,
          "--collective_timeout_minutes must be positive");
  require(rendezvous.world_size >= 1 && rendezvous.rank >= 0 &&
              rendezvous.rank < rendezvous.world_size,
          "RANK must be in [0, WORLD_SIZE)");
  require(rendezvous.world_size == 1 || device != "cuda",
          "data-parallel training runs on the CPU (Gloo) only, for now");
  require(warmup_steps >= 1, "--warmup must be at least 1");
  require(lr_factor > 0, "--lr_factor must be positive");
  require(label_smoothing >= 0 && label_smoothing < 1,
          "--label_smoothing must be in [0, 1)");
  require(validate_every_epochs >= 1, "--validate_every must be at least 1");
  require(validate_every_steps >= 0,
          "--validate_every_steps must not be negative");
  require(average_last >= 0, "--average_last must not be negative");
  require(device == "auto" || device == "cpu" || device == "cuda",
          "--device must be auto, cpu or cuda");
}

namespace {

// Why training paused.
enum class Pause {
  kEpochEnd,    // The epoch's batches are done.
  kStepReport,  // validate_every_steps steps since the last report.
  kMaxSteps,    // max_steps reached.
  kBudget,      // max_minutes spent.
};

}  // namespace

// Everything a run holds between its steps.
struct Trainer::State {
  TrainingOptions options;
  std::ostream& log;
  // last/, best/, epochs/ and averaged/ in options.out_dir.
  RunDirectory run_directory{options.out_dir, options.average_last};
  torch::Device device{torch::kCPU};
  Checkpoint checkpoint;  // Model, vocabularies and provenance.
  std::optional<PreparedCorpus> corpus;
  DevSet dev;
  // This epoch's batches; empty between epochs.
  std::optional<TrainingBatches> batches;
  int64_t epoch_batches = 0;   // Batches of this epoch trained (every rank's).
  bool epoch_complete = true;  // Whether `epoch` has ended.
  // A rank other than 0 prepares raw text here for itself; removed at the
  // end.
  fs::path scratch_dir;
  std::unique_ptr<torch::optim::Adam> optimizer;
  // The other ranks of a data-parallel run; null when training alone.
  std::unique_ptr<DataParallel> group;
  std::ofstream json_log;
  int64_t step = 0;
  int64_t epoch = 0;
  double best_dev_bleu = -1;
  Clock::time_point start = Clock::now();
  double resumed_seconds = 0;  // Training time spent before a resume.
  // Since the last report: this rank's loss and tokens, every rank's
  // tokens, and when it began.
  double loss_sum = 0;
  int64_t token_sum = 0;
  int64_t trained_tokens = 0;
  Clock::time_point report_start = Clock::now();
  bool first_step_logged = false;
  TrainingResult result;

  ~State() {
    std::error_code ignored;
    if (!scratch_dir.empty()) fs::remove_all(scratch_dir, ignored);
  }
  double ElapsedSeconds() const {
    return resumed_seconds +
           std::chrono::duration<double>(Clock::now() - start).count();
  }
  // Rank 0 (or the only rank): the one that validates, saves and logs.
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

  // Opens the corpus: options.data_dir, or the raw text prepared into
  // out_dir/data/ (a scratch directory on ranks other than 0), with the
  // vocabularies of `fixed` when resuming. Fills the checkpoint's
  // languages, script, vocabularies and the dev set.
  void OpenData(const CorpusVocabularies* fixed);
  // Prepares options.corpus into `directory` with rank 0's vocabularies
  // (or `fixed`'s) on every rank.
  PreparedCorpus PrepareRawText(const fs::path& directory,
                                const CorpusVocabularies* fixed);
  void BuildModel();
  void Resume();
  // Starts the next epoch's batches, or this one's again after `skip`
  // batches (a resumed run).
  void StartEpochBatches(int64_t skip);
  // Sums the gradients of `parameters` over the ranks.
  void SumGradients(const std::vector<torch::Tensor>& parameters);
  // Trains until the epoch ends, a report is due or training must stop.
  Pause TrainUntilPause();
  EpochReport Validate();
  // Writes last/ (with the optimizer state), best/ when dev BLEU improved,
  // and the save's copy in epochs/ when keeping saves.
  void Save(const EpochReport& report);
  // Averages the saves in epochs/ into averaged/, scores it on dev, and
  // makes it best/ when it beats the best single save.
  void AverageKeptSaves(std::ostream& log);
  // Validates, saves and logs the report (rank 0).
  void Report();
  // Updates the terminal progress line; also appends a JSON record if
  // `write_json`.
  void ShowProgress(double loss, double lr, double tokens_per_second,
                    bool write_json);
};

PreparedCorpus Trainer::State::PrepareRawText(const fs::path& directory,
                                              const CorpusVocabularies* fixed) {
  PreparationOptions preparation = options.corpus;
  preparation.max_tokens = options.model.max_positions - 1;
  preparation.threads = options.threads;
  if (fixed || !group) {
    return PrepareCorpus(preparation, directory.string(), log, fixed);
  }
  // A new data-parallel run: rank 0 builds the vocabularies, the others
  // take its files (through the rendezvous store), so every rank maps text
  // to the same ids.
  std::optional<PreparedCorpus> prepared;
  if (leads()) {
    prepared.emplace(
        PrepareCorpus(preparation, directory.string(), log, nullptr));
  }
  fs::create_directories(directory);
  const fs::path own = prepared ? fs::path(prepared->directory()) : directory;
  CorpusVocabularies shared;
  for (const char* name : {"source_vocabulary.json", "target_vocabulary.json",
                           "source_subwords.model", "target_subwords.model"}) {
    std::string bytes;
    if (leads() && fs::exists(own / name)) {
      std::ifstream in(own / name, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    bytes = group->ShareFromFirstRank(name, bytes);
    if (leads() || bytes.empty()) continue;
    const fs::path path = directory / (std::string("shared_") + name);
    std::ofstream(path, std::ios::binary) << bytes;
    const std::string file = name;
    if (file == "source_vocabulary.json") {
      shared.source = Vocabulary::Load(path.string());
    } else if (file == "target_vocabulary.json") {
      shared.target = Vocabulary::Load(path.string());
    } else {
      (file == "source_subwords.model" ? shared.source_subwords
                                       : shared.target_subwords) =
          std::make_shared<const SubwordModel>(
              SubwordModel::FromSerialized(std::move(bytes)));
    }
  }
  if (prepared) return std::move(*prepared);
  return PrepareCorpus(preparation, (directory / "corpus").string(), log,
                       &shared);
}

void Trainer::State::OpenData(const CorpusVocabularies* fixed) {
  if (!options.data_dir.empty()) {
    corpus.emplace(PreparedCorpus::Open(options.data_dir));
    if (group && group->ShareFromFirstRank("corpus_manifest",
                                           corpus->manifest().dump()) !=
                     corpus->manifest().dump()) {
      throw std::runtime_error("--data " + options.data_dir +
                               " differs from rank 0's: every "
                               "rank must read the same prepared corpus");
    }
  } else if (leads()) {
    const fs::path own = fs::path(options.out_dir) / "data";
    // A resumed run reads the corpus it prepared, when that is still there
    // and was made with the run's vocabularies.
    std::optional<PreparedCorpus> reused;
    if (fixed && fs::exists(own / PreparedCorpus::kManifestFile)) {
      try {
        reused.emplace(PreparedCorpus::Open(own.string()));
        if (!(reused->vocabularies() == *fixed) ||
            reused->manifest().value("train", "") !=
                options.corpus.train_path) {
          reused.reset();
        }
      } catch (const std::exception&) {
        reused.reset();
      }
    }
    corpus.emplace(reused ? std::move(*reused) : PrepareRawText(own, fixed));
  } else {
    scratch_dir = fs::temp_directory_path() /
                  ("fanyi-train-rank" + std::to_string(group->rank()) + "-" +
                   std::to_string(getpid()));
    corpus.emplace(PrepareRawText(scratch_dir, fixed));
  }
  if (fixed && !(corpus->vocabularies() == *fixed)) {
    throw std::runtime_error("the prepared corpus " + corpus->directory() +
                             " has other vocabularies than the run's "
                             "checkpoint in " +
                             options.out_dir + "/last");
  }
  if (corpus->max_tokens() > options.model.max_positions - 1) {
    throw std::runtime_error(
        "the prepared corpus " + corpus->directory() +
        " keeps pairs of up to " + std::to_string(corpus->max_tokens()) +
        " tokens; --max_positions " +
        std::to_string(options.model.max_positions) + " must be at least " +
        std::to_string(corpus->max_tokens() + 1));
  }
  const CorpusVocabularies& vocabularies = corpus->vocabularies();
  checkpoint.source_vocabulary = vocabularies.source;
  checkpoint.target_vocabulary = vocabularies.target;
  checkpoint.source_subwords = vocabularies.source_subwords;
  checkpoint.target_subwords = vocabularies.target_subwords;
  checkpoint.source_language = corpus->source_language();
  checkpoint.target_language = corpus->target_language();
  checkpoint.source_script = corpus->source_script();
  checkpoint.target_script = corpus->target_script();
  checkpoint.source_case = corpus->source_case();
  checkpoint.target_case = corpus->target_case();
  checkpoint.longest_source_tokens = corpus->longest_source_tokens();
  dev = corpus->ReadDev();
  const nlohmann::json& manifest = corpus->manifest();
  result.skipped_train_lines = manifest.value("skipped_lines", int64_t{0});
  log << "data: " << corpus->directory() << ": " << corpus->train_pairs()
      << " training pairs in " << corpus->shard_paths().size() << " shards, "
      << dev.sources.size()
      << " dev pairs; vocabularies: " << vocabularies.source.size()
      << " source, " << vocabularies.target.size() << " target tokens\n";
  // How much of the dev text each side's vocabulary misses: the figure to
  // compare tokenizers by, beside BLEU.
  log << "data: dev tokens unknown to the vocabularies: "
      << manifest.value("dev_unknown_source_percent", 0.0) << "% source, "
      << manifest.value("dev_unknown_target_percent", 0.0) << "% target\n";
}

void Trainer::State::BuildModel() {
  ModelConfig config = options.model;
  config.source_vocab_size = checkpoint.source_vocabulary.size();
  config.target_vocab_size = checkpoint.target_vocabulary.size();
  checkpoint.model = Transformer(config);
  checkpoint.model->to(device);
  optimizer = std::make_unique<torch::optim::Adam>(
      checkpoint.model->parameters(),
      torch::optim::AdamOptions(0.0).betas({0.9, 0.98}).eps(1e-9));
  int64_t parameters = 0;
  for (const auto& p : checkpoint.model->parameters()) parameters += p.numel();
  log << "model: " << config.encoder_layers << "+" << config.decoder_layers
      << " layers, d_model " << config.d_model << ", d_ff " << config.d_ff
      << ", " << config.heads << " heads, " << parameters << " parameters, on "
      << device.str() << "\n";
}

void Trainer::State::Resume() {
  Checkpoint saved = LoadCheckpoint(run_directory.last(), device);
  CorpusVocabularies vocabularies;
  vocabularies.source = saved.source_vocabulary;
  vocabularies.target = saved.target_vocabulary;
  vocabularies.source_subwords = saved.source_subwords;
  vocabularies.target_subwords = saved.target_subwords;
  options.model = saved.model->config();
  OpenData(&vocabularies);
  BuildModel();
  {
    torch::NoGradGuard no_grad;
    auto target = checkpoint.model->named_parameters();
    for (const auto& source : saved.model->named_parameters()) {
      target[source.key()].copy_(source.value());
    }
  }
  torch::load(*optimizer,
              (fs::path(run_directory.last()) / "optimizer.pt").string());
  const nlohmann::json& training = saved.training;
  step = training.at("step").get<int64_t>();
  epoch = training.at("epoch").get<int64_t>();
  best_dev_bleu = training.value("best_dev_bleu", -1.0);
  resumed_seconds = training.value("training_seconds", 0.0);
  // Saves from before step reports were all at epoch ends.
  epoch_complete = training.value("epoch_complete", true);
  if (!epoch_complete) {
    StartEpochBatches(training.value("epoch_batches", int64_t{0}));
  }
  log << "resumed from " << run_directory.last() << " at epoch " << epoch
      << ", step " << step
      << (epoch_complete ? ""
                         : " (within the epoch, after " +
                               std::to_string(epoch_batches) + " batches)")
      << "\n";
}

void Trainer::State::StartEpochBatches(int64_t skip) {
  // The same seed on every rank and in a resumed run: the same batches.
  batches.emplace(corpus->shard_paths(), options.batch_tokens,
                  options.shuffle_window, options.seed * 1000003 + epoch);
  TrainingBatch skipped;
  for (epoch_batches = 0; epoch_batches < skip; ++epoch_batches) {
    if (!batches->Next(&skipped, /*with_ids=*/false)) break;
  }
}

void Trainer::State::ShowProgress(double loss, double lr,
                                  double tokens_per_second, bool write_json) {
  const double elapsed = ElapsedSeconds();
  const double epoch_share =
      batches ? static_cast<double>(batches->pairs_read()) /
                    std::max<int64_t>(corpus->train_pairs(), 1)
              : 0.0;
  double eta = 0;
  if (options.max_minutes > 0) {
    eta = std::max(0.0, options.max_minutes * 60.0 - elapsed);
  } else {
    const double done = static_cast<double>(epoch - 1) + epoch_share;
    const double total = static_cast<double>(options.epochs);
    if (done > 0) eta = elapsed / done * (total - done);
  }
  if (write_json) {
    json_log << nlohmann::json{{"event", "progress"},
                               {"epoch", epoch},
                               {"step", step},
                               {"loss", loss},
                               {"lr", lr},
                               {"tokens_per_second", tokens_per_second},
                               {"eta_seconds", eta}}
                    .dump()
             << "\n";
    json_log.flush();
  }
  if (options.show_progress && isatty(fileno(stderr))) {
    std::fprintf(stderr,
                 "\repoch %lld (%.1f%%) step %lld loss %.3f lr %.2e "
                 "%.0f tok/s ETA %.0fs   ",
                 static_cast<long long>(epoch), 100.0 * epoch_share,
                 static_cast<long long>(step), loss, lr, tokens_per_second,
                 eta);
    std::fflush(stderr);
  }
}

void Trainer::State::SumGradients(
    const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> gradients;
  for (const torch::Tensor& parameter : parameters) {
    // A rank with no batch in the last step has no gradients: it adds 0.
    if (!parameter.grad().defined()) {
      parameter.mutable_grad() = torch::zeros_like(parameter);
    }
    gradients.push_back(parameter.grad());
  }
  group->SumInPlace(gradients);
}

Pause Trainer::State::TrainUntilPause() {
  // Every rank walks the same batches and takes its share of each step: a
  // step is accumulate × world size consecutive batches, rank r trains
  // accumulate of them from r × accumulate on.
  const int64_t accumulate = options.accumulate_batches;
  const int64_t per_step = accumulate * (group ? group->world_size() : 1);
  const int64_t rank = group ? group->rank() : 0;
  checkpoint.model->train();
  const std::vector<torch::Tensor> parameters = checkpoint.model->parameters();
  std::vector<TrainingBatch> mine;
  while (true) {
    mine.clear();
    // The loss is summed over the step's target tokens, every rank's, and
    // divided by their count: the gradient of the mean over the whole step,
    // whichever rank computed which part of it.
    int64_t step_tokens = 0;
    int64_t step_batches = 0;
    for (; step_batches < per_step; ++step_batches) {
      const bool is_mine = step_batches / accumulate == rank;
      TrainingBatch batch;
      if (!batches->Next(&batch, is_mine)) break;
      step_tokens += batch.target_tokens;
      if (is_mine) mine.push_back(std::move(batch));
    }
    if (step_batches == 0) {
      batches.reset();
      epoch_complete = true;
      if (options.show_progress && isatty(fileno(stderr))) {
        std::fputs("\n", stderr);
      }
      return Pause::kEpochEnd;
    }
    epoch_batches += step_batches;
    ++step;
    const double lr = NoamLearningRate(step, options.model.d_model,
                                       options.warmup_steps, options.lr_factor);
    for (auto& param_group : optimizer->param_groups()) {
      static_cast<torch::optim::AdamOptions&>(param_group.options()).lr(lr);
    }
    optimizer->zero_grad();
    for (const TrainingBatch& batch : mine) {
      TensorBatch tensors =
          MakeTensorBatch(batch.sources, batch.targets, device);
      torch::Tensor loss =
          BatchLoss(*checkpoint.model, tensors, options.label_smoothing);
      (loss / static_cast<double>(step_tokens)).backward();
      loss_sum += loss.item<double>();
      token_sum += tensors.target_tokens;
    }
    trained_tokens += step_tokens;
    if (group) SumGradients(parameters);
    optimizer->step();
    if (!first_step_logged) {
      first_step_logged = true;
      log << "training: first step done " << ElapsedSeconds() - resumed_seconds
          << " s after start\n";
    }
    const double seconds =
        std::chrono::duration<double>(Clock::now() - report_start).count();
    ShowProgress(token_sum ? loss_sum / token_sum : 0.0, lr,
                 trained_tokens / std::max(seconds, 1e-9),
                 leads() && step % kLogEverySteps == 0);
    if (StopNow()) return Pause::kBudget;
    if (options.max_steps > 0 && step >= options.max_steps) {
      return Pause::kMaxSteps;
    }
    if (options.validate_every_steps > 0 &&
        step % options.validate_every_steps == 0) {
      return Pause::kStepReport;
    }
  }
}

EpochReport Trainer::State::Validate() {
  EpochReport report;
  report.epoch = epoch;
  report.step = step;
  report.train_loss = token_sum ? loss_sum / token_sum : 0.0;
  report.tokens_per_second =
      trained_tokens /
      std::max(
          std::chrono::duration<double>(Clock::now() - report_start).count(),
          1e-9);
  checkpoint.model->eval();
  report.dev_loss = DevLoss(*checkpoint.model, dev, device);

  report.dev_bleu = DevBleu(checkpoint, dev);
  report.elapsed_seconds = ElapsedSeconds();
  return report;
}

void Trainer::State::Save(const EpochReport& report) {
  const bool best = report.dev_bleu > best_dev_bleu;
  if (best) best_dev_bleu = report.dev_bleu;
  checkpoint.training = {
      // What the corpus was prepared from: the files this run trained and
      // validated on, with --train or --data alike.
      {"train", corpus->manifest().value("train", "")},
      {"dev", corpus->manifest().value("dev", "")},
      {"data", corpus->directory()},
      {"epoch", epoch},
      {"epoch_complete", epoch_complete},
      {"epoch_batches", epoch_batches},
      {"step", step},
      {"dev_bleu", report.dev_bleu},
      {"dev_loss", report.dev_loss},
      {"best_dev_bleu", best_dev_bleu},
      {"training_seconds", report.elapsed_seconds},
      {"batch_tokens", options.batch_tokens},
      {"shuffle_window", options.shuffle_window},
      {"warmup_steps", options.warmup_steps},
      {"lr_factor", options.lr_factor},
      {"label_smoothing", options.label_smoothing},
      {"seed", options.seed},
  };
  result.last_checkpoint = run_directory.last();
  SaveCheckpoint(checkpoint, result.last_checkpoint,
                 [&](const std::string& directory) {
                   torch::save(*optimizer,
                               (fs::path(directory) / "optimizer.pt").string());
                 });
  if (best) {
    result.best_checkpoint = run_directory.best();
    SaveCheckpoint(checkpoint, result.best_checkpoint);
  }
  if (options.average_last > 1) run_directory.Keep(checkpoint, step);
}

void Trainer::State::Report() {
  EpochReport report = Validate();
  Save(report);
  result.epochs.push_back(report);
  result.best_dev_bleu = best_dev_bleu;
  json_log << nlohmann::json{{"event", "epoch"},
                             {"epoch", report.epoch},
                             {"epoch_complete", epoch_complete},
                             {"step", report.step},
                             {"train_loss", report.train_loss},
                             {"dev_loss", report.dev_loss},
                             {"dev_bleu", report.dev_bleu},
                             {"tokens_per_second", report.tokens_per_second},
                             {"elapsed_seconds", report.elapsed_seconds}}
                  .dump()
           << "\n";
  json_log.flush();
  log << std::fixed << std::setprecision(3) << "epoch " << report.epoch
      << (epoch_complete ? "" : " (in progress)") << " step " << report.step
      << " train_loss " << report.train_loss << " dev_loss " << report.dev_loss
      << std::setprecision(2) << " dev_bleu " << report.dev_bleu
      << std::setprecision(0) << " " << report.tokens_per_second << " tok/s "
      << report.elapsed_seconds << "s\n"
      << std::defaultfloat << std::setprecision(6);
}

Trainer::Trainer(TrainingOptions options) : options_(std::move(options)) {
  options_.Validate();
  options_.model.source_vocab_size = 5;  // Placeholders until data is read.
  options_.model.target_vocab_size = 5;
  options_.model.Validate();
}

Trainer::~Trainer() = default;

TrainingResult Trainer::Run(std::ostream& log) {
  State state{options_, log};
  const int threads =
      options_.threads > 0
          ? options_.threads
          : static_cast<int>(std::thread::hardware_concurrency());
  torch::set_num_threads(std::max(threads, 1));
  torch::manual_seed(options_.seed);
  state.device = ResolveDevice(options_.device);
  if (options_.rendezvous.world_size > 1) {
    state.group = std::make_unique<DataParallel>(
        options_.rendezvous, std::chrono::milliseconds(static_cast<int64_t>(
                                 options_.collective_timeout_minutes * 60000)));
    log << "rank " << state.group->rank() << " of " << state.group->world_size()
        << " joined at " << options_.rendezvous.master_address << ":"
        << options_.rendezvous.master_port << "\n";
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
    state.json_log.open(fs::path(options_.out_dir) / "train_log.jsonl",
                        std::ios::app);
  }
  state.checkpoint.model_version =
      fs::path(options_.out_dir).filename().string() + "-" + Timestamp();

  state.options.resume = resuming;  // From here on: this run resumes.
  if (resuming) {
    state.Resume();
  } else {
    state.OpenData(nullptr);
    state.BuildModel();
  }
  if (state.group) {
    // The same starting weights on every rank; then each rank its own
    // dropout.
    torch::NoGradGuard no_grad;
    state.group->CopyFromFirstRank(state.checkpoint.model->parameters());
    torch::manual_seed(options_.seed + 1000003 * state.group->rank());
  }
  state.result.best_dev_bleu = std::max(state.best_dev_bleu, 0.0);
  state.report_start = Clock::now();
  while (!state.StopNow() &&
         (options_.max_steps == 0 || state.step < options_.max_steps)) {
    if (state.epoch_complete) {
      if (state.epoch >= options_.epochs) break;
      ++state.epoch;
      state.epoch_complete = false;
      state.StartEpochBatches(0);
    }
    const Pause pause = state.TrainUntilPause();
    const bool last = pause == Pause::kBudget || pause == Pause::kMaxSteps ||
                      (pause == Pause::kEpochEnd &&
                       (state.epoch == options_.epochs || state.StopNow()));
    const bool report = last || pause == Pause::kStepReport ||
                        (pause == Pause::kEpochEnd &&
                         state.epoch % options_.validate_every_epochs == 0);
    if (report) {
      if (state.leads()) state.Report();
      state.loss_sum = 0;
      state.token_sum = 0;
      state.trained_tokens = 0;
      state.report_start = Clock::now();
    }
    if (last) break;
  }
  if (options_.average_last > 1 && state.leads()) state.AverageKeptSaves(log);
  state.result.best_checkpoint = state.run_directory.best();
  return state.result;
}

void Trainer::State::AverageKeptSaves(std::ostream& log) {
  const std::vector<std::string> saves = run_directory.KeptSaves();
  if (saves.size() < 2) return;  // Nothing to average yet.
  Checkpoint average = AverageCheckpoints(saves);
  average.model->to(device);
  average.model->eval();
  const double bleu = DevBleu(average, dev);
  average.training["dev_bleu"] = bleu;
  average.training["best_single_dev_bleu"] = best_dev_bleu;
  SaveCheckpoint(average, run_directory.averaged());
  log << std::fixed << std::setprecision(2) << "averaged the last "
      << saves.size() << " saves into " << run_directory.averaged()
      << ": dev_bleu " << bleu << " (best single save " << best_dev_bleu
      << ")\n";
  if (bleu > best_dev_bleu) {
    SaveCheckpoint(average, run_directory.best());
    best_dev_bleu = bleu;
    result.best_dev_bleu = bleu;
    log << "best/ is now the average\n";
  }
}

}  // namespace fanyi
