#include "tests/random_model.h"

#include <algorithm>

#include "common/text/vocabulary.h"

namespace fanyi::testing_util {

Transformer RandomTinyModel(uint64_t seed, bool tie_target_embeddings,
                            int64_t target_vocab_size) {
  torch::manual_seed(seed);
  ModelConfig config;
  config.source_vocab_size = 23;
  config.target_vocab_size = target_vocab_size;
  config.encoder_layers = 2;
  config.decoder_layers = 2;
  config.d_model = 16;
  config.d_ff = 32;
  config.heads = 4;
  config.dropout = 0.0;
  config.max_positions = 64;
  config.tie_target_embeddings = tie_target_embeddings;
  Transformer model(config);
  model->to(at::kDouble);
  model->eval();
  return model;
}

Transformer RandomEndingModel(uint64_t seed, double eos_bias) {
  Transformer model = RandomTinyModel(seed, /*tie_target_embeddings=*/false,
                                      /*target_vocab_size=*/17);
  torch::NoGradGuard no_grad;
  model->named_parameters()["generator.bias"][Vocabulary::kEosId] += eos_bias;
  return model;
}

double LargestWeightDifference(const Transformer& a, const Transformer& b) {
  auto expected = b->named_parameters();
  double largest = 0;
  for (const auto& parameter : a->named_parameters()) {
    largest = std::max(largest, (parameter.value() - expected[parameter.key()])
                                    .abs()
                                    .max()
                                    .item<double>());
  }
  return largest;
}

}  // namespace fanyi::testing_util
