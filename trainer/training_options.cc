#include "trainer/training_options.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fanyi {

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
    require(corpus.train_path.empty() && corpus.dev_path.empty() &&
                corpus.suggestions_path.empty(),
            "--data replaces --train, --suggestions and --dev: give one or "
            "the other");
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
  require(warmup_steps >= 1, "--warmup must be at least 1");
  require(lr_factor > 0, "--lr_factor must be positive");
  require(label_smoothing >= 0 && label_smoothing < 1,
          "--label_smoothing must be in [0, 1)");
  require(word_dropout >= 0 && word_dropout < 1,
          "--word_dropout must be in [0, 1)");
  require(rdrop_weight >= 0, "--rdrop_weight must not be negative");
  require(validate_every_epochs >= 1, "--validate_every must be at least 1");
  require(validate_every_steps >= 0,
          "--validate_every_steps must not be negative");
  require(average_last >= 0, "--average_last must not be negative");
  for (double length_penalty : length_penalties) {
    require(length_penalty >= 0, "--length_penalties must not be negative");
  }
  require(device == "auto" || device == "cpu" || device == "cuda",
          "--device must be auto, cpu or cuda");
  require(precision == "fp32" || precision == "bf16",
          "--precision must be fp32 or bf16");
}

}  // namespace fanyi
