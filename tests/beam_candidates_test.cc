#include "common/decoding/beam_candidates.h"

#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace fanyi {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// The plain loops (float logits on the CPU) pick what log_softmax, the sum
// and topk pick (the ATen path, which double logits take), for every
// sentence, with rows picked out of a larger batch or all of it, and with
// dead beams.
TEST(BeamCandidatesTest, PlainLoopsPickWhatTopkPicks) {
  torch::manual_seed(3);
  const int64_t beam = 3, vocab = 50;
  const torch::Tensor logits = at::randn({8, vocab}) * 4;
  const std::vector<double> scores = {-1.5, -2.0, kMinusInfinity,
                                      -0.5, -0.7, -3.0};
  for (const std::vector<int64_t>& rows :
       {std::vector<int64_t>{}, std::vector<int64_t>{7, 1, 4, 0, 2, 5}}) {
    const torch::Tensor batch = rows.empty() ? logits.narrow(0, 0, 6) : logits;
    const BeamCandidates loops = TopBeamCandidates(batch, rows, scores, beam);
    const BeamCandidates aten =
        TopBeamCandidates(batch.to(at::kDouble), rows, scores, beam);
    ASSERT_EQ(loops.count, 6);
    ASSERT_EQ(aten.count, 6);
    EXPECT_EQ(loops.indices, aten.indices);
    for (size_t i = 0; i < loops.totals.size(); ++i) {
      // The log-sum-exp of float logits, in float.
      EXPECT_NEAR(loops.totals[i], aten.totals[i], 1e-5) << i;
    }
    for (int64_t s = 0; s < 2; ++s) {
      for (int64_t k = 1; k < loops.count; ++k) {
        EXPECT_GE(loops.totals[s * 6 + k - 1], loops.totals[s * 6 + k]);
      }
    }
    // Sentence 0's third beam is dead: its continuations are not picked.
    for (int64_t k = 0; k < 6; ++k) EXPECT_LT(loops.indices[k], 2 * vocab);
  }
}

// Equal totals keep the lower index first, as the first maximum an argmax
// returns; with fewer continuations than 2·beam, all of them come back.
TEST(BeamCandidatesTest, TiesKeepTheLowerIndexAndSmallVocabulariesAll) {
  const BeamCandidates ties =
      TopBeamCandidates(at::zeros({2, 5}), {}, {0.0, kMinusInfinity}, 2);
  ASSERT_EQ(ties.count, 4);
  EXPECT_EQ(ties.indices, (std::vector<int64_t>{0, 1, 2, 3}));
  const BeamCandidates all =
      TopBeamCandidates(at::zeros({2, 1}), {}, {0.0, -1.0}, 2);
  EXPECT_EQ(all.count, 2);
  EXPECT_EQ(all.indices, (std::vector<int64_t>{0, 1}));
  EXPECT_THROW(TopBeamCandidates(at::zeros({1, 3}), {}, {0.0}, 4),
               std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
