#include "common/decoding/beam_candidates.h"

#include <ATen/ops/full.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/decoding/vector_math.h"

namespace fanyi {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// The plain loops (float logits on the CPU) pick what log_softmax, the sum
// and topk pick (the ATen path, which double logits take), for every
// sentence, with rows picked out of a larger batch or all of it, and with
// dead beams; with a small vocabulary and with one of many 64-value blocks
// that the loops skip by their maximum.
TEST(BeamCandidatesTest, PlainLoopsPickWhatTopkPicks) {
  torch::manual_seed(3);
  const int64_t beam = 3;
  for (const int64_t vocab : {50, 2033}) {
    const torch::Tensor logits = at::randn({8, vocab}) * 4;
    const std::vector<double> scores = {-1.5, -2.0, kMinusInfinity,
                                        -0.5, -0.7, -3.0};
    for (const std::vector<int64_t>& rows :
         {std::vector<int64_t>{}, std::vector<int64_t>{7, 1, 4, 0, 2, 5}}) {
      const torch::Tensor batch =
          rows.empty() ? logits.narrow(0, 0, 6) : logits;
      const BeamCandidates loops = TopBeamCandidates(batch, rows, scores, beam);
      const BeamCandidates aten =
          TopBeamCandidates(batch.to(at::kDouble), rows, scores, beam);
      ASSERT_EQ(loops.count, 6);
      ASSERT_EQ(aten.count, 6);
      EXPECT_EQ(loops.indices, aten.indices) << vocab;
      for (size_t i = 0; i < loops.totals.size(); ++i) {
        // The log-sum-exp of float logits, in float.
        EXPECT_NEAR(loops.totals[i], aten.totals[i], 1e-5) << vocab << " " << i;
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
}

// Logits far below a row's largest (-1000, -inf) add nothing to its
// log-sum-exp, and equal logits split it evenly: every total is exact.
TEST(BeamCandidatesTest, LogSumExpOfExtremeRows) {
  torch::Tensor logits = at::full({1, 200}, -1000.0);
  logits[0][3] = 0.0;
  logits[0][150] = 0.0;
  logits[0][199] = -std::numeric_limits<float>::infinity();
  const BeamCandidates top = TopBeamCandidates(logits, {}, {0.0}, 1, 1);
  ASSERT_EQ(top.count, 2);
  EXPECT_EQ(top.indices, (std::vector<int64_t>{3, 150}));
  EXPECT_NEAR(top.totals[0], -std::log(2.0), 1e-7);
  EXPECT_NEAR(top.totals[1], -std::log(2.0), 1e-7);
}

// The exp that the log-sum-exp (and attention) use: within 2 float ulps of
// std::exp over the range it serves, 1 at 0, and exactly 0 below -87 and
// at -inf.
TEST(VectorMathTest, ExpOfNonPositiveFollowsExp) {
  double worst = 0;
  for (float y = -87.0f; y <= 0.0f; y += 0.0013f) {
    const double exact = std::exp(static_cast<double>(y));
    worst = std::max(worst, std::abs(ExpOfNonPositive(y) - exact) / exact);
  }
  EXPECT_LT(worst, 2.4e-7);
  EXPECT_EQ(ExpOfNonPositive(0.0f), 1.0f);
  EXPECT_EQ(ExpOfNonPositive(-87.5f), 0.0f);
  EXPECT_EQ(ExpOfNonPositive(-std::numeric_limits<float>::infinity()), 0.0f);
}

// Equal totals keep the lower index first, as the first maximum an argmax
// returns; with fewer continuations than 2·beam, all of them come back.
TEST(BeamCandidatesTest, TiesKeepTheLowerIndexAndSmallVocabulariesAll) {
  for (const int64_t vocab : {5, 300}) {
    const BeamCandidates ties =
        TopBeamCandidates(at::zeros({2, vocab}), {}, {0.0, kMinusInfinity}, 2);
    ASSERT_EQ(ties.count, 4);
    EXPECT_EQ(ties.indices, (std::vector<int64_t>{0, 1, 2, 3}));
  }
  const BeamCandidates all =
      TopBeamCandidates(at::zeros({2, 1}), {}, {0.0, -1.0}, 2);
  EXPECT_EQ(all.count, 2);
  EXPECT_EQ(all.indices, (std::vector<int64_t>{0, 1}));
  EXPECT_THROW(TopBeamCandidates(at::zeros({1, 3}), {}, {0.0}, 4),
               std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
