#include "trainer/dev_evaluation.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "common/eval/corpus_evaluation.h"
#include "common/pipeline/translator.h"
#include "trainer/tensor_batch.h"

namespace fanyi {
namespace {

constexpr int64_t kDevBatchSize = 64;

}  // namespace

double DevLoss(TransformerImpl& model, const DevSet& dev,
               const torch::Device& device) {
  std::vector<int64_t> order(dev.sources.size());
  std::iota(order.begin(), order.end(), 0);
  // Batches of similar lengths waste little on padding.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return dev.sources[a].size() < dev.sources[b].size();
  });
  double loss_sum = 0;
  int64_t tokens = 0;
  for (size_t begin = 0; begin < order.size(); begin += kDevBatchSize) {
    const size_t end = std::min(order.size(), begin + kDevBatchSize);
    std::vector<std::vector<int64_t>> sources, targets;
    for (size_t i = begin; i < end; ++i) {
      sources.push_back(dev.sources[order[i]]);
      targets.push_back(dev.targets[order[i]]);
    }
    torch::NoGradGuard no_grad;
    TensorBatch tensors = MakeTensorBatch(sources, targets, device);
    loss_sum += BatchLoss(model, tensors, 0.0).item<double>();
    tokens += tensors.target_tokens;
  }
  return loss_sum / std::max<int64_t>(tokens, 1);
}

double DevBleu(const Checkpoint& model, const DevSet& dev) {
  auto translator = Translator::FromCheckpoint(model, TranslatorOptions());
  const CorpusTranslation translation =
      TranslateCorpus(*translator, dev.texts, kDevBatchSize, /*beam_size=*/1);
  return ScoreCorpus(translation.hypotheses, dev.references,
                     model.target_language)
      .bleu.score;
}

}  // namespace fanyi
