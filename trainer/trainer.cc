#include "trainer/trainer.h"

#include <torch/nn/functional/loss.h>
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
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/decoding/greedy_decoder.h"
#include "common/decoding/translator.h"
#include "common/eval/corpus_evaluation.h"
#include "common/model/checkpoint.h"
#include "common/model/checkpoint_averaging.h"
#include "common/model/device.h"
#include "common/text/parallel_corpus.h"
#include "common/text/placeholders.h"
#include "common/text/script_converter.h"
#include "common/text/tokenizer.h"
#include "common/text/vocabulary.h"
#include "trainer/data_parallel.h"
#include "trainer/subword_training.h"
#include "trainer/token_batches.h"

namespace fanyi {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kDevBatchSize = 64;
constexpr int64_t kLogEverySteps = 10;  // JSON progress records.

// A tokenized, id-mapped corpus.
struct EncodedCorpus {
  std::vector<std::vector<int64_t>> sources;
  std::vector<std::vector<int64_t>> targets;
  std::vector<std::string> texts;       // Raw source text, for BLEU.
  std::vector<std::string> references;  // Raw target text, for BLEU.
};

// Ids of the pairs in `batch` as model inputs: source with </s>, target input
// starting with <s>, target output ending with </s>.
struct TensorBatch {
  torch::Tensor source;         // [batch, src_len + 1]
  torch::Tensor target_input;   // [batch, tgt_len + 1]
  torch::Tensor target_output;  // [batch, tgt_len + 1]
  int64_t target_tokens = 0;
};

TensorBatch MakeTensorBatch(const EncodedCorpus& corpus,
                            const std::vector<int64_t>& batch,
                            const torch::Device& device) {
  std::vector<std::vector<int64_t>> sources, inputs, outputs;
  TensorBatch tensors;
  for (int64_t index : batch) {
    sources.push_back(corpus.sources[index]);
    std::vector<int64_t> input = {Vocabulary::kBosId};
    input.insert(input.end(), corpus.targets[index].begin(),
                 corpus.targets[index].end());
    std::vector<int64_t> output = corpus.targets[index];
    output.push_back(Vocabulary::kEosId);
    tensors.target_tokens += static_cast<int64_t>(output.size());
    inputs.push_back(std::move(input));
    outputs.push_back(std::move(output));
  }
  tensors.source = MakeSourceTensor(sources, device);
  tensors.target_input = PadRows(inputs, device);
  tensors.target_output = PadRows(outputs, device);
  return tensors;
}

// Sum of per-token losses of a batch; <pad> targets are ignored.
torch::Tensor BatchLoss(TransformerImpl& model, const TensorBatch& batch,
                        double label_smoothing) {
  torch::Tensor logits = model.forward(batch.source, batch.target_input);
  const int64_t vocab = logits.size(-1);
  namespace F = torch::nn::functional;
  return F::cross_entropy(
      logits.reshape({-1, vocab}),  // [batch * tgt_len, vocab]
      batch.target_output.reshape({-1}),
      F::CrossEntropyFuncOptions()
          .ignore_index(Vocabulary::kPadId)
          .label_smoothing(label_smoothing)
          .reduction(torch::kSum));
}

// The epoch saves in `directory` (epochs/epoch-K, complete ones only, not a
// save's .tmp staging directory), oldest first: the names sort by epoch.
std::vector<std::string> EpochSaves(const fs::path& directory) {
  std::vector<std::string> saves;
  if (!fs::is_directory(directory)) return saves;
  for (const auto& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("epoch-", 0) == 0 && entry.path().extension().empty()) {
      saves.push_back(entry.path().string());
    }
  }
  std::sort(saves.begin(), saves.end());
  return saves;
}

std::string Timestamp() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%dT%H%M%S", std::gmtime(&now));
  return text;
}

// Whether the run continues the one in options.out_dir (--resume with a
// last/ there). A run never starts afresh over another one's saves: that
// would overwrite the served best/ after its first epoch and average the
// old run's epochs/ with its own. Throws std::runtime_error, changing
// nothing, when out_dir holds a run and --resume was not given, or holds
// saves but no last/ to resume from.
bool StartsFromLastRun(const TrainingOptions& options, std::ostream& log) {
  const fs::path out(options.out_dir);
  std::vector<std::string> saves;
  for (const char* name : {"last", "best", "averaged", "epochs"}) {
    if (fs::exists(out / name)) saves.push_back(std::string(name) + "/");
  }
  if (saves.empty()) {
    if (options.resume) {
      log << "no run in " << out.string() << " yet; starting one\n";
    }
    return false;
  }
  std::string listed;
  for (const std::string& save : saves) {
    listed += (listed.empty() ? "" : ", ") + save;
  }
  if (!options.resume) {
    throw std::runtime_error(
        "--out " + out.string() + " already holds a training run (" + listed +
        "); pass --resume to continue it, or give another --out (nothing "
        "was changed)");
  }
  if (!fs::exists(out / "last")) {
    throw std::runtime_error("--out " + out.string() + " holds " + listed +
                             " but no last/ to resume from; give another "
                             "--out (nothing was changed)");
  }
  return true;
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
  require(!train_path.empty(), "--train is required");
  require(!dev_path.empty(), "--dev is required");
  require(!out_dir.empty(), "--out is required");
  require(epochs >= 1, "--epochs must be at least 1");
  require(max_minutes >= 0, "--max_minutes must not be negative");
  require(batch_tokens >= 1, "--batch_tokens must be at least 1");
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
  require(vocab_min_count >= 1, "--vocab_min_count must be at least 1");
  require(source_subwords == 0 || source_subwords >= 8,
          "--source_subwords must be 0 (words) or at least 8");
  require(target_subwords == 0 || target_subwords >= 8,
          "--target_subwords must be 0 (characters or words) or at least 8");
  require(target_script == "simplified" || target_script == "keep",
          "--target_script must be simplified or keep");
  require(validate_every_epochs >= 1,
          "--validate_every_epochs must be at least 1");
  require(average_last >= 0, "--average_last must not be negative");
  require(device == "auto" || device == "cpu" || device == "cuda",
          "--device must be auto, cpu or cuda");
}

// Placeholders a training sentence may hold (｟1｠ ... ｟8｠).
constexpr int kMaxPlaceholders = 8;

// Everything a run holds between its steps.
struct Trainer::State {
  TrainingOptions options;
  std::ostream& log;
  torch::Device device{torch::kCPU};
  Checkpoint checkpoint;  // Model, vocabularies and provenance.
  EncodedCorpus train;
  EncodedCorpus dev;
  std::vector<SentencePair> raw_dev_pairs;  // Normalized script only.
  std::unique_ptr<torch::optim::Adam> optimizer;
  // The other ranks of a data-parallel run; null when training alone.
  std::unique_ptr<DataParallel> group;
  std::ofstream json_log;
  int64_t step = 0;
  int64_t epoch = 0;
  double best_dev_bleu = -1;
  Clock::time_point start = Clock::now();
  double resumed_seconds = 0;  // Training time spent before a resume.
  TrainingResult result;

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

  void ReadData();
  // Trains the subword models the options ask for (a new run only).
  void TrainSubwordModels(const std::vector<SentencePair>& train_pairs);
  // Writes the Chinese side in one script and puts placeholders in place of
  // the spans both sides share (options.target_script, .placeholders);
  // keeps the dev pairs, before placeholders, in raw_dev_pairs.
  void NormalizePairs(std::vector<SentencePair>* train_pairs,
                      std::vector<SentencePair>* dev_pairs);
  void BuildModel();
  void Resume();
  // Sums the gradients of `parameters` over the ranks.
  void SumGradients(const std::vector<torch::Tensor>& parameters);
  // Trains one epoch or until the budget ends; returns mean train loss.
  double TrainEpoch(double* tokens_per_second);
  EpochReport Validate(double train_loss, double tokens_per_second);
  // Dev BLEU of `model`'s greedy translations, by the same code as
  // fanyi-eval.
  double DevBleu(const Checkpoint& model);
  // Writes last/ (with the optimizer state), best/ when dev BLEU improved,
  // and the epoch's copy when keeping epochs.
  void Save(const EpochReport& report);
  // Saves this epoch to epochs/epoch-K and drops all but the newest
  // average_last there.
  void KeepEpoch();
  // Averages the saves in epochs/ into averaged/, scores it on dev, and
  // makes it best/ when it beats the best single save.
  void AverageKeptEpochs(std::ostream& log);
  // Updates the terminal progress line; also appends a JSON record if
  // `write_json`.
  void ShowProgress(double loss, double lr, double tokens_per_second,
                    int64_t batch_index, int64_t batches, bool write_json);
};

void Trainer::State::NormalizePairs(std::vector<SentencePair>* train_pairs,
                                    std::vector<SentencePair>* dev_pairs) {
  const bool chinese = IsChineseLanguage(options.target_language);
  checkpoint.target_script =
      chinese && options.target_script == "simplified" ? "simplified" : "";
  std::optional<ScriptConverter> to_simplified;
  if (!checkpoint.target_script.empty()) {
    to_simplified.emplace(ChineseScript::kSimplified);
  }
  const PlaceholderMasker masker({}, kMaxPlaceholders);
  int64_t masked_pairs = 0;
  for (std::vector<SentencePair>* pairs : {train_pairs, dev_pairs}) {
    for (SentencePair& pair : *pairs) {
      if (to_simplified) pair.target = to_simplified->Convert(pair.target);
      if (pairs == dev_pairs) raw_dev_pairs.push_back(pair);
      if (!options.placeholders) continue;
      MaskedPair masked = masker.MaskPair(pair.source, pair.target);
      if (masked.spans == 0) continue;
      // Numbered from a first index that the line picks, so that every
      // index up to kMaxPlaceholders is trained, not only ｟1｠ and ｟2｠:
      // a sentence with many numbers uses them all.
      const int first_index = static_cast<int>(
          std::hash<std::string>()(pair.source) %
          static_cast<size_t>(kMaxPlaceholders - masked.spans + 1));
      if (first_index > 0) {
        masked = masker.MaskPair(pair.source, pair.target, first_index);
      }
      if (pairs == train_pairs) ++masked_pairs;
      pair.source = std::move(masked.source);
      pair.target = std::move(masked.target);
    }
  }
  log << "data: target script " << (chinese ? options.target_script : "n/a")
      << "; " << masked_pairs << " training pairs with placeholders\n";
}

void Trainer::State::TrainSubwordModels(
    const std::vector<SentencePair>& train_pairs) {
  for (int side = 0; side < 2; ++side) {
    const int pieces =
        side == 0 ? options.source_subwords : options.target_subwords;
    if (pieces == 0) continue;
    std::vector<std::string> sentences;
    sentences.reserve(train_pairs.size());
    for (const SentencePair& pair : train_pairs) {
      sentences.push_back(side == 0 ? pair.source : pair.target);
    }
    SubwordTrainingOptions subword_options;
    subword_options.vocab_size = pieces;
    const auto started = std::chrono::steady_clock::now();
    // Rank 0 trains the model; the other ranks take its bytes, so that
    // every rank tokenizes alike.
    std::string serialized;
    if (leads()) {
      serialized =
          TrainSubwordModel(sentences, subword_options, options.out_dir)
              .serialized();
    }
    if (group) {
      serialized = group->ShareFromFirstRank(
          side == 0 ? "source_subwords" : "target_subwords", serialized);
    }
    auto model = std::make_shared<const SubwordModel>(
        SubwordModel::FromSerialized(std::move(serialized)));
    log << "data: " << (side == 0 ? "source" : "target") << " subword model of "
        << model->size() << " pieces ("
        << std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         started)
               .count()
        << " s)\n";
    (side == 0 ? checkpoint.source_subwords : checkpoint.target_subwords) =
        std::move(model);
  }
}

void Trainer::State::ReadData() {
  auto read = [&](const std::string& path, std::vector<SentencePair>* pairs) {
    ParallelCorpus corpus = ReadParallelTsv(path);
    for (const BadLine& bad : corpus.bad_lines) {
      log << path << ":" << bad.line_number << ": skipped: " << bad.reason
          << "\n";
    }
    if (!corpus.bad_lines.empty()) {
      log << path << ": skipped " << corpus.bad_lines.size() << " bad lines\n";
    }
    if (corpus.pairs.empty()) {
      throw std::runtime_error(path + ": no usable sentence pairs");
    }
    *pairs = std::move(corpus.pairs);
    return static_cast<int64_t>(corpus.bad_lines.size());
  };
  std::vector<SentencePair> train_pairs, dev_pairs;
  result.skipped_train_lines = read(options.train_path, &train_pairs);
  read(options.dev_path, &dev_pairs);
  NormalizePairs(&train_pairs, &dev_pairs);
  if (!options.resume) TrainSubwordModels(train_pairs);
  const Tokenizer source_tokenizer(options.source_language,
                                   checkpoint.source_subwords);
  const Tokenizer target_tokenizer(options.target_language,
                                   checkpoint.target_subwords);

  std::vector<std::vector<std::string>> train_sources, train_targets;
  for (const SentencePair& pair : train_pairs) {
    train_sources.push_back(source_tokenizer.Tokenize(pair.source));
    train_targets.push_back(target_tokenizer.Tokenize(pair.target));
  }
  if (!options.resume) {
    checkpoint.source_vocabulary = Vocabulary::Build(
        train_sources, options.vocab_min_count, options.vocab_max_size);
    checkpoint.target_vocabulary = Vocabulary::Build(
        train_targets, options.vocab_min_count, options.vocab_max_size);
  }
  // Pairs that do not fit the position table cannot be trained on.
  const int64_t max_tokens = options.model.max_positions - 1;
  int64_t too_long = 0;
  checkpoint.longest_source_tokens = 0;
  for (size_t i = 0; i < train_pairs.size(); ++i) {
    if (static_cast<int64_t>(train_sources[i].size()) > max_tokens ||
        static_cast<int64_t>(train_targets[i].size()) > max_tokens) {
      ++too_long;
      continue;
    }
    checkpoint.longest_source_tokens =
        std::max<int64_t>(checkpoint.longest_source_tokens,
                          static_cast<int64_t>(train_sources[i].size()));
    train.sources.push_back(
        checkpoint.source_vocabulary.Encode(train_sources[i]));
    train.targets.push_back(
        checkpoint.target_vocabulary.Encode(train_targets[i]));
  }
  if (too_long > 0) {
    log << options.train_path << ": skipped " << too_long
        << " pairs longer than " << max_tokens << " tokens\n";
  }
  for (const SentencePair& pair : dev_pairs) {
    std::vector<int64_t> source = checkpoint.source_vocabulary.Encode(
        source_tokenizer.Tokenize(pair.source));
    std::vector<int64_t> target = checkpoint.target_vocabulary.Encode(
        target_tokenizer.Tokenize(pair.target));
    source.resize(std::min<size_t>(source.size(), max_tokens));
    target.resize(std::min<size_t>(target.size(), max_tokens));
    dev.sources.push_back(std::move(source));
    dev.targets.push_back(std::move(target));
  }
  // Dev BLEU translates the raw sources as the server would, against the
  // references in the script the model writes.
  for (const SentencePair& pair : raw_dev_pairs) {
    dev.texts.push_back(pair.source);
    dev.references.push_back(pair.target);
  }
  log << "data: " << train.sources.size() << " training pairs, "
      << dev.sources.size()
      << " dev pairs; vocabularies: " << checkpoint.source_vocabulary.size()
      << " source, " << checkpoint.target_vocabulary.size()
      << " target tokens\n";
  // How much of the dev text each side's vocabulary misses: the figure to
  // compare tokenizers by, beside BLEU.
  auto unknown_percent = [](const std::vector<std::vector<int64_t>>& rows) {
    int64_t unknown = 0;
    int64_t total = 0;
    for (const std::vector<int64_t>& row : rows) {
      for (int64_t id : row) unknown += id == Vocabulary::kUnkId;
      total += static_cast<int64_t>(row.size());
    }
    return total > 0 ? 100.0 * static_cast<double>(unknown) / total : 0.0;
  };
  log << "data: dev tokens unknown to the vocabularies: "
      << unknown_percent(dev.sources) << "% source, "
      << unknown_percent(dev.targets) << "% target\n";
}

void Trainer::State::BuildModel() {
  ModelConfig config = options.model;
  config.source_vocab_size = checkpoint.source_vocabulary.size();
  config.target_vocab_size = checkpoint.target_vocabulary.size();
  checkpoint.model = Transformer(config);
  checkpoint.model->to(device);
  checkpoint.source_language = options.source_language;
  checkpoint.target_language = options.target_language;
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
  const std::string last = (fs::path(options.out_dir) / "last").string();
  Checkpoint saved = LoadCheckpoint(last, device);
  checkpoint.source_vocabulary = saved.source_vocabulary;
  checkpoint.target_vocabulary = saved.target_vocabulary;
  checkpoint.source_subwords = saved.source_subwords;
  checkpoint.target_subwords = saved.target_subwords;
  options.model = saved.model->config();
  ReadData();
  BuildModel();
  {
    torch::NoGradGuard no_grad;
    auto target = checkpoint.model->named_parameters();
    for (const auto& source : saved.model->named_parameters()) {
      target[source.key()].copy_(source.value());
    }
  }
  torch::load(*optimizer, (fs::path(last) / "optimizer.pt").string());
  const nlohmann::json& training = saved.training;
  step = training.at("step").get<int64_t>();
  epoch = training.at("epoch").get<int64_t>();
  best_dev_bleu = training.value("best_dev_bleu", -1.0);
  resumed_seconds = training.value("training_seconds", 0.0);
  log << "resumed from " << last << " at epoch " << epoch << ", step " << step
      << "\n";
}

void Trainer::State::ShowProgress(double loss, double lr,
                                  double tokens_per_second, int64_t batch_index,
                                  int64_t batches, bool write_json) {
  const double elapsed = ElapsedSeconds();
  double eta = 0;
  if (options.max_minutes > 0) {
    eta = std::max(0.0, options.max_minutes * 60.0 - elapsed);
  } else {
    const double done = epoch - 1 + double(batch_index) / batches;
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
                 "\repoch %lld step %lld (%lld/%lld) loss %.3f lr %.2e "
                 "%.0f tok/s ETA %.0fs   ",
                 static_cast<long long>(epoch), static_cast<long long>(step),
                 static_cast<long long>(batch_index),
                 static_cast<long long>(batches), loss, lr, tokens_per_second,
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

double Trainer::State::TrainEpoch(double* tokens_per_second) {
  std::mt19937_64 rng(options.seed * 1000003 + epoch);
  std::vector<PairLength> lengths;
  for (size_t i = 0; i < train.sources.size(); ++i) {
    lengths.push_back({static_cast<int64_t>(train.sources[i].size()) + 1,
                       static_cast<int64_t>(train.targets[i].size()) + 1});
  }
  // Every rank makes the same batches (same data, same seed) and takes its
  // share of each step: a step is `per_step` consecutive batches, rank r
  // takes accumulate_batches of them from r × accumulate_batches on.
  const auto batches = MakeTokenBatches(lengths, options.batch_tokens, rng);
  const auto size = static_cast<int64_t>(batches.size());
  const int64_t accumulate = options.accumulate_batches;
  const int64_t per_step = accumulate * (group ? group->world_size() : 1);
  const int64_t rank = group ? group->rank() : 0;
  checkpoint.model->train();
  const std::vector<torch::Tensor> parameters = checkpoint.model->parameters();
  double loss_sum = 0;
  int64_t token_sum = 0;       // This rank's, for its loss.
  int64_t trained_tokens = 0;  // Every rank's, for the rate.
  const Clock::time_point epoch_start = Clock::now();
  for (int64_t first = 0; first < size; first += per_step) {
    const int64_t step_end = std::min(size, first + per_step);
    // The loss is summed over the step's target tokens, every rank's, and
    // divided by their count: the gradient of the mean over the whole step,
    // whichever rank computed which part of it.
    int64_t step_tokens = 0;
    for (int64_t b = first; b < step_end; ++b) {
      for (int64_t pair : batches[b]) step_tokens += lengths[pair].target;
    }
    ++step;
    const double lr = NoamLearningRate(step, options.model.d_model,
                                       options.warmup_steps, options.lr_factor);
    for (auto& param_group : optimizer->param_groups()) {
      static_cast<torch::optim::AdamOptions&>(param_group.options()).lr(lr);
    }
    optimizer->zero_grad();
    const int64_t mine = std::min(step_end, first + rank * accumulate);
    for (int64_t b = mine; b < std::min(step_end, mine + accumulate); ++b) {
      TensorBatch batch = MakeTensorBatch(train, batches[b], device);
      torch::Tensor loss =
          BatchLoss(*checkpoint.model, batch, options.label_smoothing);
      (loss / static_cast<double>(step_tokens)).backward();
      loss_sum += loss.item<double>();
      token_sum += batch.target_tokens;
    }
    trained_tokens += step_tokens;
    if (group) SumGradients(parameters);
    optimizer->step();
    const double seconds =
        std::chrono::duration<double>(Clock::now() - epoch_start).count();
    *tokens_per_second = trained_tokens / std::max(seconds, 1e-9);
    ShowProgress(token_sum ? loss_sum / token_sum : 0.0, lr, *tokens_per_second,
                 step_end, size, leads() && step % kLogEverySteps == 0);
    if (StopNow()) break;
  }
  if (options.show_progress && isatty(fileno(stderr))) std::fputs("\n", stderr);
  return token_sum ? loss_sum / token_sum : 0.0;
}

EpochReport Trainer::State::Validate(double train_loss,
                                     double tokens_per_second) {
  EpochReport report;
  report.epoch = epoch;
  report.step = step;
  report.train_loss = train_loss;
  report.tokens_per_second = tokens_per_second;
  TransformerImpl& model = *checkpoint.model;
  model.eval();

  // Dev loss, without autograd and without label smoothing.
  std::vector<int64_t> order(dev.sources.size());
  std::iota(order.begin(), order.end(), 0);
  // Batches of similar lengths waste little on padding.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return dev.sources[a].size() < dev.sources[b].size();
  });
  double loss_sum = 0;
  int64_t token_sum = 0;
  for (size_t begin = 0; begin < order.size(); begin += kDevBatchSize) {
    const size_t end = std::min(order.size(), begin + kDevBatchSize);
    std::vector<int64_t> batch(order.begin() + begin, order.begin() + end);
    torch::NoGradGuard no_grad;
    TensorBatch tensors = MakeTensorBatch(dev, batch, device);
    loss_sum += BatchLoss(model, tensors, 0.0).item<double>();
    token_sum += tensors.target_tokens;
  }
  report.dev_loss = loss_sum / std::max<int64_t>(token_sum, 1);

  report.dev_bleu = DevBleu(checkpoint);
  report.elapsed_seconds = ElapsedSeconds();
  return report;
}

double Trainer::State::DevBleu(const Checkpoint& model) {
  auto translator = Translator::FromCheckpoint(model, TranslatorOptions());
  const CorpusTranslation translation =
      TranslateCorpus(*translator, dev.texts, kDevBatchSize, /*beam_size=*/1);
  return ScoreCorpus(translation.hypotheses, dev.references,
                     options.target_language)
      .bleu.score;
}

void Trainer::State::Save(const EpochReport& report) {
  const bool best = report.dev_bleu > best_dev_bleu;
  if (best) best_dev_bleu = report.dev_bleu;
  checkpoint.training = {
      {"train", options.train_path},
      {"dev", options.dev_path},
      {"epoch", epoch},
      {"step", step},
      {"dev_bleu", report.dev_bleu},
      {"dev_loss", report.dev_loss},
      {"best_dev_bleu", best_dev_bleu},
      {"training_seconds", report.elapsed_seconds},
      {"batch_tokens", options.batch_tokens},
      {"warmup_steps", options.warmup_steps},
      {"lr_factor", options.lr_factor},
      {"label_smoothing", options.label_smoothing},
      {"seed", options.seed},
  };
  const fs::path out(options.out_dir);
  result.last_checkpoint = (out / "last").string();
  SaveCheckpoint(checkpoint, result.last_checkpoint,
                 [&](const std::string& directory) {
                   torch::save(*optimizer,
                               (fs::path(directory) / "optimizer.pt").string());
                 });
  if (best) {
    result.best_checkpoint = (out / "best").string();
    SaveCheckpoint(checkpoint, result.best_checkpoint);
  }
  if (options.average_last > 1) KeepEpoch();
}

void Trainer::State::KeepEpoch() {
  const fs::path kept = fs::path(options.out_dir) / "epochs";
  char name[32];
  std::snprintf(name, sizeof(name), "epoch-%04lld",
                static_cast<long long>(epoch));
  SaveCheckpoint(checkpoint, (kept / name).string());
  // Drop all but the newest average_last.
  const std::vector<std::string> saves = EpochSaves(kept);
  const size_t keep = static_cast<size_t>(options.average_last);
  for (size_t i = 0; i + keep < saves.size(); ++i) fs::remove_all(saves[i]);
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
  const bool resuming = StartsFromLastRun(options_, log);
  if (state.group && state.group->Sum(resuming ? 1 : 0) !=
                         (resuming ? state.group->world_size() : 0)) {
    throw std::runtime_error(
        "the ranks disagree on resuming: every rank must see the same --out "
        "(shared storage) holding last/");
  }
  if (state.leads()) {
    fs::create_directories(options_.out_dir);
    state.json_log.open(fs::path(options_.out_dir) / "train_log.jsonl",
                        std::ios::app);
  }
  state.checkpoint.model_version =
      fs::path(options_.out_dir).filename().string() + "-" + Timestamp();

  state.options.resume = resuming;  // From here on: this run resumes.
  if (resuming) {
    state.Resume();
  } else {
    state.ReadData();
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
  while (state.epoch < options_.epochs && !state.StopNow()) {
    ++state.epoch;
    double tokens_per_second = 0;
    const double train_loss = state.TrainEpoch(&tokens_per_second);
    const bool last_epoch = state.epoch == options_.epochs || state.StopNow();
    if (!state.leads() ||
        (state.epoch % options_.validate_every_epochs != 0 && !last_epoch)) {
      continue;
    }
    EpochReport report = state.Validate(train_loss, tokens_per_second);
    state.Save(report);
    state.result.epochs.push_back(report);
    state.result.best_dev_bleu = state.best_dev_bleu;
    state.json_log
        << nlohmann::json{{"event", "epoch"},
                          {"epoch", report.epoch},
                          {"step", report.step},
                          {"train_loss", report.train_loss},
                          {"dev_loss", report.dev_loss},
                          {"dev_bleu", report.dev_bleu},
                          {"tokens_per_second", report.tokens_per_second},
                          {"elapsed_seconds", report.elapsed_seconds}}
               .dump()
        << "\n";
    state.json_log.flush();
    log << std::fixed << std::setprecision(3) << "epoch " << report.epoch
        << " step " << report.step << " train_loss " << report.train_loss
        << " dev_loss " << report.dev_loss << std::setprecision(2)
        << " dev_bleu " << report.dev_bleu << std::setprecision(0) << " "
        << report.tokens_per_second << " tok/s " << report.elapsed_seconds
        << "s\n";
  }
  if (options_.average_last > 1 && state.leads()) state.AverageKeptEpochs(log);
  state.result.best_checkpoint = (fs::path(options_.out_dir) / "best").string();
  return state.result;
}

void Trainer::State::AverageKeptEpochs(std::ostream& log) {
  const fs::path out(options.out_dir);
  const std::vector<std::string> saves = EpochSaves(out / "epochs");
  if (saves.size() < 2) return;  // Nothing to average yet.
  Checkpoint average = AverageCheckpoints(saves);
  average.model->to(device);
  average.model->eval();
  const double bleu = DevBleu(average);
  average.training["dev_bleu"] = bleu;
  average.training["best_single_dev_bleu"] = best_dev_bleu;
  SaveCheckpoint(average, (out / "averaged").string());
  log << std::fixed << std::setprecision(2) << "averaged the last "
      << saves.size() << " saves into " << (out / "averaged").string()
      << ": dev_bleu " << bleu << " (best single save " << best_dev_bleu
      << ")\n";
  if (bleu > best_dev_bleu) {
    SaveCheckpoint(average, (out / "best").string());
    best_dev_bleu = bleu;
    result.best_dev_bleu = bleu;
    log << "best/ is now the average\n";
  }
}

}  // namespace fanyi
