#include "trainer/dev_evaluation.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/eval/corpus_evaluation.h"
#include "common/pipeline/translator.h"
#include "trainer/tensor_batch.h"

namespace fanyi {
namespace {

constexpr int64_t kDevBatchSize = 64;

// The dev pairs' indices in batches of kDevBatchSize, by source length:
// batches of similar lengths waste little on padding.
std::vector<std::vector<size_t>> LengthSortedBatches(const DevSet& dev) {
  std::vector<size_t> order(dev.sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return dev.sources[a].size() < dev.sources[b].size();
  });
  std::vector<std::vector<size_t>> batches;
  for (size_t begin = 0; begin < order.size(); begin += kDevBatchSize) {
    const size_t end = std::min(order.size(), begin + kDevBatchSize);
    batches.emplace_back(order.begin() + begin, order.begin() + end);
  }
  return batches;
}

// This rank's batches: every world_size-th, from its rank on.
std::vector<size_t> BatchesOf(int rank, int ranks, size_t batches) {
  std::vector<size_t> mine;
  for (size_t b = rank; b < batches; b += ranks) mine.push_back(b);
  return mine;
}

}  // namespace

double DevLoss(TransformerImpl& model, const DevSet& dev,
               const torch::Device& device, DataParallel* group) {
  const int rank = group ? group->rank() : 0;
  const int ranks = group ? group->world_size() : 1;
  const std::vector<std::vector<size_t>> batches = LengthSortedBatches(dev);
  double loss_sum = 0;
  double tokens = 0;
  for (size_t b : BatchesOf(rank, ranks, batches.size())) {
    std::vector<std::vector<int64_t>> sources, targets;
    for (size_t i : batches[b]) {
      sources.push_back(dev.sources[i]);
      targets.push_back(dev.targets[i]);
    }
    torch::NoGradGuard no_grad;
    TensorBatch tensors =
        MakeTensorBatch(sources, targets, model.config(), device);
    loss_sum += BatchLoss(model, tensors, 0.0).item<double>();
    tokens += static_cast<double>(tensors.target_tokens);
  }
  if (group) {
    loss_sum = group->Sum(loss_sum);
    tokens = group->Sum(tokens);
  }
  return loss_sum / std::max(tokens, 1.0);
}

double DevBleu(const Checkpoint& model, const DevSet& dev, DataParallel* group,
               int beam_size) {
  const int rank = group ? group->rank() : 0;
  const int ranks = group ? group->world_size() : 1;
  const std::vector<std::vector<size_t>> batches = LengthSortedBatches(dev);
  // The model's own translations, without the output guard's second
  // decodings: they would cost most in the first epochs, when most
  // translations loop, and hide what the model still gets wrong.
  TranslatorOptions options;
  options.output_guard = false;
  auto translator = Translator::FromCheckpoint(model, options);
  std::vector<std::string> hypotheses(dev.texts.size());
  nlohmann::json mine = nlohmann::json::array();  // In batch order.
  for (size_t b : BatchesOf(rank, ranks, batches.size())) {
    std::vector<std::string> texts;
    for (size_t i : batches[b]) texts.push_back(dev.texts[i]);
    CorpusTranslation translation =
        TranslateCorpus(*translator, texts, kDevBatchSize, beam_size);
    for (size_t k = 0; k < texts.size(); ++k) {
      hypotheses[batches[b][k]] = std::move(translation.hypotheses[k]);
      if (group) mine.push_back(hypotheses[batches[b][k]]);
    }
  }
  if (group) {
    // Hypotheses are valid UTF-8 (vocabulary tokens and spans of validated
    // sources); `replace` only keeps a bad one from failing the run.
    const std::vector<std::string> gathered = group->GatherOnFirstRank(
        mine.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    for (int other = 1; other < static_cast<int>(gathered.size()); ++other) {
      const nlohmann::json theirs = nlohmann::json::parse(gathered[other]);
      size_t k = 0;
      for (size_t b : BatchesOf(other, ranks, batches.size())) {
        for (size_t i : batches[b]) {
          hypotheses[i] = theirs.at(k++).get<std::string>();
        }
      }
    }
  }
  const double bleu =
      rank == 0 ? ScoreCorpus(hypotheses, dev.references, model.target_language)
                      .bleu.score
                : 0.0;
  return group ? group->Sum(bleu) : bleu;
}

LengthPenaltyChoice ChooseLengthPenalty(Checkpoint model, const DevSet& dev,
                                        std::vector<double> length_penalties,
                                        int beam_size, DataParallel* group) {
  if (length_penalties.empty()) {
    throw std::invalid_argument("no length penalty to choose from");
  }
  std::sort(length_penalties.begin(), length_penalties.end());
  LengthPenaltyChoice choice;
  double best_bleu = -1;
  for (double length_penalty : length_penalties) {
    model.length_penalty = length_penalty;
    const double bleu = DevBleu(model, dev, group, beam_size);
    choice.dev_bleu.emplace_back(length_penalty, bleu);
    if (bleu > best_bleu) {
      best_bleu = bleu;
      choice.length_penalty = length_penalty;
    }
  }
  return choice;
}

}  // namespace fanyi
