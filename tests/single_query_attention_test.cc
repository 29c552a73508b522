#include "common/model/single_query_attention.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/full.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/model/torch_compat.h"

namespace fanyi {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

TEST(SingleQueryAttentionTest, EqualsTheGeneralAttentionOnCacheViews) {
  torch::manual_seed(7);
  for (int64_t d_k : {32, 5}) {  // 5: not a multiple of the 8 partial sums
    const int64_t batch = 3, heads = 4, columns = 9;
    torch::Tensor query = at::randn({batch, heads, 1, d_k});
    // Views of columns [2, 11) of a larger cache, as DecoderState hands out.
    torch::Tensor key_storage = at::randn({batch, heads, 16, d_k});
    torch::Tensor value_storage = at::randn({batch, heads, 16, d_k});
    torch::Tensor keys = key_storage.narrow(2, 2, columns);
    torch::Tensor values = value_storage.narrow(2, 2, columns);
    // Row 1 joined late (-inf on its first columns); row 2 has a short
    // source (-inf on its last ones).
    torch::Tensor bias = at::zeros({batch, 1, 1, columns});
    bias[1].narrow(2, 0, 4).fill_(kMinusInfinity);
    bias[2].narrow(2, 6, 3).fill_(kMinusInfinity);
    for (const torch::Tensor& b : {bias, at::zeros({1, 1, 1, columns})}) {
      ASSERT_TRUE(SingleQueryAttentionApplies(query, keys, values, b));
      torch::Tensor expected = compat::Attention(query, keys, values, b, 0.0);
      torch::Tensor actual = SingleQueryAttention(query, keys, values, b);
      ASSERT_EQ(actual.sizes(), expected.sizes());
      EXPECT_TRUE(at::allclose(actual, expected, 1e-5, 1e-6))
          << "d_k " << d_k << " bias " << b.sizes();
    }
  }
}

TEST(SingleQueryAttentionTest, MaskedColumnsChangeNothingAtAll) {
  torch::manual_seed(8);
  torch::Tensor query = at::randn({1, 2, 1, 16});
  torch::Tensor keys = at::randn({1, 2, 5, 16});
  torch::Tensor values = at::randn({1, 2, 5, 16});
  torch::Tensor alone =
      SingleQueryAttention(query, keys, values, at::zeros({1, 1, 1, 5}));
  // The same row padded with three masked columns, as when it shares a
  // batch with longer rows: bit for bit the same result, whatever the
  // masked columns hold (here NaN, like an unwritten cache slot).
  torch::Tensor padded_bias = at::zeros({1, 1, 1, 8});
  padded_bias.narrow(3, 0, 3).fill_(kMinusInfinity);
  const torch::Tensor garbage =
      at::full({1, 2, 3, 16}, std::numeric_limits<float>::quiet_NaN());
  torch::Tensor padded =
      SingleQueryAttention(query, at::cat({garbage, keys}, 2),
                           at::cat({garbage, values}, 2), padded_bias);
  EXPECT_TRUE(at::equal(padded, alone));
}

// Rows reading a shared cache through a table (beams reading their
// parents' columns, rows reading their source's cache row) get what the
// general attention gives over the gathered keys and values, and masked
// columns are never read, whatever cache row their entries name.
TEST(SingleQueryAttentionTest, ReadsTheCacheThroughATable) {
  torch::manual_seed(9);
  const int64_t batch = 3, heads = 2, columns = 5, d_k = 8;
  torch::Tensor query = at::randn({batch, heads, 1, d_k});
  // Four cache rows for three batch rows: one spare.
  torch::Tensor keys = at::randn({4, heads, columns, d_k});
  torch::Tensor values = at::randn({4, heads, columns, d_k});
  torch::Tensor rows =
      at::tensor({3, 3, 0, 1, 1, 3, 3, 3, 2, 2, 0, 0, 0, 0, 0}, at::kLong)
          .view({batch, columns});
  torch::Tensor bias = at::zeros({batch, 1, 1, columns});
  bias[2].narrow(2, 0, 3).fill_(kMinusInfinity);  // Row 2 joined late.
  ASSERT_TRUE(SingleQueryAttentionApplies(query, keys, values, bias, rows));
  const torch::Tensor expected =
      compat::Attention(query, GatherCacheRows(keys, rows),
                        GatherCacheRows(values, rows), bias, 0.0);
  EXPECT_TRUE(
      at::allclose(SingleQueryAttention(query, keys, values, bias, rows),
                   expected, 1e-5, 1e-6));
  // Row 2's masked columns name cache row 0; NaN there changes nothing.
  torch::Tensor poisoned = keys.clone();
  poisoned[0].narrow(1, 0, 3).fill_(std::numeric_limits<float>::quiet_NaN());
  rows[0].fill_(1);  // Row 0 now reads cache row 1 only.
  const torch::Tensor again = GatherCacheRows(values, rows);
  EXPECT_TRUE(at::allclose(
      SingleQueryAttention(query, poisoned, values, bias, rows),
      compat::Attention(query, GatherCacheRows(keys, rows), again, bias, 0.0),
      1e-5, 1e-6));
  // One cache row for every column: a stride-0 table, as for sources.
  torch::Tensor source_rows =
      at::tensor({2, 0, 2}, at::kLong).unsqueeze(1).expand({batch, columns});
  EXPECT_TRUE(at::allclose(
      SingleQueryAttention(query, keys, values, bias, source_rows),
      compat::Attention(query, keys.index_select(0, source_rows.select(1, 0)),
                        values.index_select(0, source_rows.select(1, 0)), bias,
                        0.0),
      1e-5, 1e-6));
}

TEST(SingleQueryAttentionTest, AppliesOnlyToOneFloatQueryPerRow) {
  torch::Tensor keys = at::randn({2, 2, 3, 4});
  torch::Tensor bias = at::zeros({2, 1, 1, 3});
  EXPECT_TRUE(
      SingleQueryAttentionApplies(at::randn({2, 2, 1, 4}), keys, keys, bias));
  // Two queries per row (training, the encoder).
  EXPECT_FALSE(
      SingleQueryAttentionApplies(at::randn({2, 2, 2, 4}), keys, keys, bias));
  // Double precision.
  EXPECT_FALSE(SingleQueryAttentionApplies(
      at::randn({2, 2, 1, 4}, at::kDouble), keys.to(at::kDouble),
      keys.to(at::kDouble), bias.to(at::kDouble)));
  // Keys whose last dimension is strided.
  EXPECT_FALSE(SingleQueryAttentionApplies(
      at::randn({2, 2, 1, 4}), at::randn({2, 2, 4, 3}).transpose(2, 3), keys,
      bias));
}

}  // namespace
}  // namespace fanyi
