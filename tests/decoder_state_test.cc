#include "common/model/decoder_state.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <vector>

namespace fanyi {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// Five rows; row r's caches hold the value r, and the rows joined at
// columns {3, 2, 4, 4, 4} (-inf before) with sources of lengths
// {2, 3, 3, 4, 1} (-inf after). Columns 2..5 of 16 are in use.
DecoderState FiveRows() {
  const std::vector<int64_t> joined = {3, 2, 4, 4, 4};
  const std::vector<int64_t> source_lengths = {2, 3, 3, 4, 1};
  DecoderState state;
  state.first_column = 2;
  state.end_column = 6;
  state.positions = at::arange(5, at::kLong);
  state.self_bias_storage = at::zeros({5, 1, 1, 16});
  state.source_bias = at::zeros({5, 1, 1, 4});
  DecoderLayerCache layer;
  layer.key_storage = at::zeros({5, 2, 16, 3});
  layer.value_storage = at::zeros({5, 2, 16, 3});
  layer.memory_keys = at::zeros({5, 2, 4, 3});
  layer.memory_values = at::zeros({5, 2, 4, 3});
  for (int64_t r = 0; r < 5; ++r) {
    state.self_bias_storage[r].narrow(2, 0, joined[r]).fill_(kMinusInfinity);
    state.source_bias[r]
        .narrow(2, source_lengths[r], 4 - source_lengths[r])
        .fill_(kMinusInfinity);
    for (torch::Tensor* t : {&layer.key_storage, &layer.value_storage,
                             &layer.memory_keys, &layer.memory_values}) {
      (*t)[r].fill_(static_cast<float>(r));
    }
  }
  state.layers.push_back(layer);
  return state;
}

TEST(DecoderStateTest, RemoveRowsMovesTheLastRowsIntoTheGaps) {
  DecoderState state = FiveRows();
  const DecoderState before = FiveRows();
  const void* key_data = state.layers[0].key_storage.data_ptr();

  const std::vector<int64_t> order = state.RemoveRows({1, 3});

  // Row 4 moved into row 1's place; rows 0 and 2 stayed.
  EXPECT_EQ(order, (std::vector<int64_t>{0, 4, 2}));
  ASSERT_EQ(state.batch_size(), 3);
  EXPECT_TRUE(at::equal(state.positions, at::tensor({0, 4, 2}, at::kLong)));
  // In place: the cache kept its storage.
  EXPECT_EQ(state.layers[0].key_storage.data_ptr(), key_data);
  // Row 1 (joined at column 2) left, so the oldest row joined at column 3;
  // row 3 (the only source of length 4) left, so sources end at 3.
  EXPECT_EQ(state.first_column, 3);
  EXPECT_EQ(state.end_column, 6);
  EXPECT_EQ(state.source_bias.size(3), 3);
  const DecoderLayerCache& layer = state.layers[0];
  for (int64_t r = 0; r < 3; ++r) {
    const int64_t was = order[r];
    EXPECT_TRUE(at::equal(state.self_bias()[r],
                          before.self_bias_storage[was].narrow(2, 3, 3)))
        << r;
    EXPECT_TRUE(at::equal(state.source_bias[r],
                          before.source_bias[was].narrow(2, 0, 3)))
        << r;
    EXPECT_TRUE(at::equal(layer.key_storage[r].narrow(1, 3, 3),
                          before.layers[0].key_storage[was].narrow(1, 3, 3)))
        << r;
    EXPECT_TRUE(at::equal(layer.value_storage[r].narrow(1, 3, 3),
                          before.layers[0].value_storage[was].narrow(1, 3, 3)))
        << r;
    EXPECT_TRUE(at::equal(layer.memory_keys[r],
                          before.layers[0].memory_keys[was].narrow(1, 0, 3)))
        << r;
    EXPECT_TRUE(at::equal(layer.memory_values[r],
                          before.layers[0].memory_values[was].narrow(1, 0, 3)))
        << r;
  }
}

TEST(DecoderStateTest, RemovingTheLastRowsCopiesNothing) {
  DecoderState state = FiveRows();
  EXPECT_EQ(state.RemoveRows({3, 4}), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(state.batch_size(), 3);
  EXPECT_EQ(state.first_column, 2);  // Row 1 is still there.
  EXPECT_TRUE(at::equal(state.positions, at::arange(3, at::kLong)));
}

// Beams reorder rows within their group: a row may be listed twice (two
// beams extending one parent) and the batch may shrink in the same call.
// Few changed rows are copied in place; many are gathered anew.
TEST(DecoderStateTest, ReorderRowsMakesEachRowItsListedRow) {
  struct Case {
    std::vector<int64_t> order;
    bool in_place;
    int64_t first_column;  // Of the oldest remaining row.
  };
  for (const Case& test_case :
       {Case{{0, 1, 1, 3}, true, 2}, Case{{2, 2, 0, 1}, false, 2},
        Case{{3, 0, 4}, false, 3}}) {
    DecoderState state = FiveRows();
    const DecoderState before = FiveRows();
    const void* key_data = state.layers[0].key_storage.data_ptr();
    const std::vector<int64_t>& order = test_case.order;
    state.ReorderRows(order);
    const auto rows = static_cast<int64_t>(order.size());
    ASSERT_EQ(state.batch_size(), rows);
    EXPECT_EQ(state.layers[0].key_storage.data_ptr() == key_data,
              test_case.in_place);
    EXPECT_TRUE(at::equal(state.positions, at::tensor(order, at::kLong)));
    EXPECT_EQ(state.first_column, test_case.first_column);
    const int64_t first = test_case.first_column;
    const int64_t used = 6 - first;
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_TRUE(at::equal(
          state.layers[0].key_storage[r].narrow(1, first, used),
          before.layers[0].key_storage[order[r]].narrow(1, first, used)))
          << r;
      EXPECT_TRUE(
          at::equal(state.self_bias()[r],
                    before.self_bias_storage[order[r]].narrow(2, first, used)))
          << r;
    }
  }
  DecoderState state = FiveRows();
  EXPECT_THROW(state.ReorderRows({0, 1, 2, 3, 0, 1}), std::invalid_argument);
}

// Append builds the merged state aside: a failure part-way through (here
// the second layer's cross-attention keys have the wrong width, so the
// merge throws after the first layer is done) leaves the state as it was,
// every layer with the same rows.
TEST(DecoderStateTest, FailedAppendLeavesTheStateAsItWas) {
  auto two_layers = [] {
    DecoderState state = FiveRows();
    DecoderLayerCache second;
    for (auto member :
         {&DecoderLayerCache::key_storage, &DecoderLayerCache::value_storage,
          &DecoderLayerCache::memory_keys, &DecoderLayerCache::memory_values}) {
      second.*member = (state.layers[0].*member).clone();
    }
    state.layers.push_back(second);
    return state;
  };
  DecoderState state = two_layers();
  const DecoderState before = two_layers();
  // Rows that have decoded nothing yet, as Append takes them.
  auto fresh = [&two_layers] {
    DecoderState rows = two_layers();
    rows.end_column = rows.first_column;
    return rows;
  };
  DecoderState other = fresh();
  other.layers[1].memory_keys = other.layers[1].memory_keys.narrow(3, 0, 2);
  EXPECT_ANY_THROW(state.Append(other));

  ASSERT_EQ(state.batch_size(), before.batch_size());
  EXPECT_EQ(state.first_column, before.first_column);
  EXPECT_EQ(state.end_column, before.end_column);
  EXPECT_TRUE(at::equal(state.positions, before.positions));
  EXPECT_TRUE(at::equal(state.source_bias, before.source_bias));
  EXPECT_TRUE(at::equal(state.self_bias_storage, before.self_bias_storage));
  ASSERT_EQ(state.layers.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    for (auto member :
         {&DecoderLayerCache::key_storage, &DecoderLayerCache::value_storage,
          &DecoderLayerCache::memory_keys, &DecoderLayerCache::memory_values}) {
      EXPECT_TRUE(at::equal(state.layers[i].*member, before.layers[i].*member))
          << "layer " << i;
    }
  }
  // And it still merges well-formed rows, but only rows that have decoded
  // nothing yet.
  state.Append(fresh());
  EXPECT_EQ(state.batch_size(), 10);
  EXPECT_THROW(state.Append(two_layers()), std::invalid_argument);
  EXPECT_EQ(state.batch_size(), 10);
}

}  // namespace
}  // namespace fanyi
