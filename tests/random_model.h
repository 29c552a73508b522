#ifndef FANYI_TESTS_RANDOM_MODEL_H_
#define FANYI_TESTS_RANDOM_MODEL_H_

#include <cstdint>

#include "common/model/transformer.h"

namespace fanyi::testing_util {

// A random tiny Transformer (2+2 layers, d_model 16, 4 heads, source
// vocabulary 23) in double precision and eval mode: near-ties between scores
// lie far above rounding noise, so decoders that must agree do so exactly.
Transformer RandomTinyModel(uint64_t seed, bool tie_target_embeddings = true,
                            int64_t target_vocab_size = 19);

// RandomTinyModel untied, with a target vocabulary of 17, whose generator
// favours </s> by `eos_bias`, so that sentences end before their length
// limits, at different steps, and beams finish at different steps.
Transformer RandomEndingModel(uint64_t seed, double eos_bias);

// The largest absolute difference between the same-named weights of two
// models of one shape.
double LargestWeightDifference(const Transformer& a, const Transformer& b);

}  // namespace fanyi::testing_util

#endif  // FANYI_TESTS_RANDOM_MODEL_H_
