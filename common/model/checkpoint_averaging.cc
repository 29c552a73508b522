#include "common/model/checkpoint_averaging.h"

#include <torch/torch.h>

#include <stdexcept>

#include "common/model/model_config.h"

namespace fanyi {
namespace {

bool SameVocabulary(const Vocabulary& a, const Vocabulary& b) {
  if (a.size() != b.size()) return false;
  for (int64_t id = 0; id < a.size(); ++id) {
    if (a.Token(id) != b.Token(id)) return false;
  }
  return true;
}

}  // namespace

Checkpoint AverageCheckpoints(const std::vector<std::string>& directories) {
  if (directories.empty()) {
    throw std::invalid_argument("no checkpoints to average");
  }
  Checkpoint average = LoadCheckpoint(directories.front(), torch::kCPU);
  const nlohmann::json config = ModelConfigToJson(average.model->config());
  torch::NoGradGuard no_grad;
  auto sums = average.model->named_parameters();
  for (size_t i = 1; i < directories.size(); ++i) {
    const Checkpoint other = LoadCheckpoint(directories[i], torch::kCPU);
    if (ModelConfigToJson(other.model->config()) != config) {
      throw std::runtime_error(directories[i] + ": model config differs from " +
                               directories.front() + "'s");
    }
    if (!SameVocabulary(other.source_vocabulary, average.source_vocabulary) ||
        !SameVocabulary(other.target_vocabulary, average.target_vocabulary)) {
      throw std::runtime_error(directories[i] + ": vocabularies differ from " +
                               directories.front() + "'s");
    }
    // Same config, so the same parameter names and shapes.
    for (const auto& parameter : other.model->named_parameters()) {
      sums[parameter.key()].add_(parameter.value());
    }
  }
  for (auto& parameter : sums) {
    parameter.value().div_(static_cast<double>(directories.size()));
  }
  average.model_version += "-avg" + std::to_string(directories.size());
  average.training = {{"averaged", directories}};
  return average;
}

}  // namespace fanyi
