#include "common/model/decoder_state.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/full.h>
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

// `rows` rows that have decoded nothing yet, as Append takes them, with
// `layers` layers shaped like FiveRows' (16 columns, 2 heads, d_k 3): sources
// of `source_length` positions, their cross-attention keys and values all
// `value`.
DecoderState FreshRows(int64_t rows, int64_t source_length, float value,
                       size_t layers = 1) {
  DecoderState state;
  state.positions = at::zeros({rows}, at::kLong);
  state.self_bias_storage = at::zeros({rows, 1, 1, 16});
  state.source_bias = at::zeros({rows, 1, 1, source_length});
  for (size_t i = 0; i < layers; ++i) {
    DecoderLayerCache layer;
    layer.key_storage = at::zeros({rows, 2, 16, 3});
    layer.value_storage = at::zeros({rows, 2, 16, 3});
    layer.memory_keys = at::full({rows, 2, source_length, 3}, value);
    layer.memory_values = at::full({rows, 2, source_length, 3}, value);
    state.layers.push_back(layer);
  }
  return state;
}

// What the rows of `state` hold in the entries in use, copied.
DecoderState InUse(const DecoderState& state) {
  DecoderState copy;
  copy.first_column = state.first_column;
  copy.end_column = state.end_column;
  copy.positions = state.positions.clone();
  copy.source_bias = state.source_bias.clone();
  copy.self_bias_storage = state.self_bias().clone();
  for (const DecoderLayerCache& layer : state.layers) {
    DecoderLayerCache columns;
    columns.key_storage =
        layer.key_storage.narrow(2, state.first_column, state.columns())
            .clone();
    columns.value_storage =
        layer.value_storage.narrow(2, state.first_column, state.columns())
            .clone();
    columns.memory_keys = layer.memory_keys.clone();
    columns.memory_values = layer.memory_values.clone();
    copy.layers.push_back(columns);
  }
  return copy;
}

void ExpectEqual(const DecoderState& actual, const DecoderState& expected) {
  ASSERT_EQ(actual.batch_size(), expected.batch_size());
  EXPECT_EQ(actual.first_column, expected.first_column);
  EXPECT_EQ(actual.end_column, expected.end_column);
  EXPECT_TRUE(at::equal(actual.positions, expected.positions));
  EXPECT_TRUE(at::equal(actual.source_bias, expected.source_bias));
  EXPECT_TRUE(at::equal(actual.self_bias_storage, expected.self_bias_storage));
  ASSERT_EQ(actual.layers.size(), expected.layers.size());
  for (size_t i = 0; i < actual.layers.size(); ++i) {
    for (auto member :
         {&DecoderLayerCache::key_storage, &DecoderLayerCache::value_storage,
          &DecoderLayerCache::memory_keys, &DecoderLayerCache::memory_values}) {
      EXPECT_TRUE(
          at::equal(actual.layers[i].*member, expected.layers[i].*member))
          << "layer " << i;
    }
  }
}

// The first Append moves every row to buffers with room; later ones write
// only their own rows there, the caches staying where they are, even when
// the new rows' sources are longer than any before.
TEST(DecoderStateTest, AppendWithRoomWritesOnlyTheNewRows) {
  DecoderState state = FiveRows();
  state.Append(FreshRows(1, 4, 10.0f));
  ASSERT_GE(state.row_capacity, 8);
  ASSERT_GE(state.source_capacity, 6);
  EXPECT_EQ(state.first_column, 0);  // The columns in use moved first.
  EXPECT_EQ(state.end_column, 4);
  const DecoderState before = InUse(state);
  const void* key_data = state.layers[0].key_storage.data_ptr();
  const void* memory_data = state.layers[0].memory_keys.data_ptr();

  state.Append(FreshRows(2, 6, 20.0f));

  ASSERT_EQ(state.batch_size(), 8);
  EXPECT_EQ(state.layers[0].key_storage.data_ptr(), key_data);
  EXPECT_EQ(state.layers[0].memory_keys.data_ptr(), memory_data);
  EXPECT_EQ(state.first_column, 0);
  EXPECT_EQ(state.end_column, 4);
  ASSERT_EQ(state.source_bias.size(3), 6);
  const DecoderState after = InUse(state);
  const DecoderLayerCache& layer = after.layers[0];
  const DecoderLayerCache& was = before.layers[0];
  for (int64_t r = 0; r < 6; ++r) {
    EXPECT_TRUE(at::equal(layer.key_storage[r], was.key_storage[r])) << r;
    EXPECT_TRUE(
        at::equal(after.self_bias_storage[r], before.self_bias_storage[r]))
        << r;
    EXPECT_TRUE(
        at::equal(layer.memory_keys[r].narrow(1, 0, 4), was.memory_keys[r]))
        << r;
    // Past their sources: zero keys, -inf bias.
    EXPECT_TRUE(
        at::equal(layer.memory_keys[r].narrow(1, 4, 2), at::zeros({2, 2, 3})))
        << r;
    EXPECT_TRUE(at::equal(after.source_bias[r].narrow(2, 4, 2),
                          at::full({1, 1, 2}, kMinusInfinity)))
        << r;
  }
  for (int64_t r = 6; r < 8; ++r) {
    EXPECT_TRUE(at::equal(layer.key_storage[r], at::zeros({2, 4, 3}))) << r;
    EXPECT_TRUE(at::equal(after.self_bias_storage[r],
                          at::full({1, 1, 4}, kMinusInfinity)))
        << r;
    EXPECT_TRUE(at::equal(layer.memory_values[r], at::full({2, 6, 3}, 20.0f)))
        << r;
    EXPECT_TRUE(at::equal(after.source_bias[r], at::zeros({1, 1, 6}))) << r;
  }
  EXPECT_TRUE(at::equal(state.positions,
                        at::tensor({0, 1, 2, 3, 4, 0, 0, 0}, at::kLong)));
}

// Rows that leave, beams that reorder and columns that grow keep the room:
// the next Append still writes in place.
TEST(DecoderStateTest, ReorderAndGrowthKeepTheRoom) {
  DecoderState state = FiveRows();
  state.Append(FreshRows(1, 4, 10.0f));
  const int64_t row_capacity = state.row_capacity;
  state.ReorderRows({5, 4, 3, 2, 1});  // Most rows change: gathered anew.
  state.RemoveRows({0});               // In place.
  while (state.end_column < state.self_bias_storage.size(3)) {
    state.AddColumn();
  }
  state.AddColumn();  // Full: the columns move to wider storages.
  EXPECT_EQ(state.row_capacity, row_capacity);
  const void* key_data = state.layers[0].key_storage.data_ptr();
  state.Append(FreshRows(2, 4, 20.0f));
  EXPECT_EQ(state.layers[0].key_storage.data_ptr(), key_data);
  EXPECT_EQ(state.batch_size(), 6);
}

// Append builds the merged state aside: a failure part-way through (here
// the second layer's cross-attention keys have the wrong width, so the
// merge throws after the first layer is done) leaves the state as it was,
// every layer with the same rows, whether the caches had room for the new
// rows (written into spare rows) or not (moved to new buffers).
TEST(DecoderStateTest, FailedAppendLeavesTheStateAsItWas) {
  for (const bool with_room : {false, true}) {
    SCOPED_TRACE(with_room ? "with room" : "without room");
    auto two_layers = [] {
      DecoderState state = FiveRows();
      DecoderLayerCache second;
      for (auto member :
           {&DecoderLayerCache::key_storage, &DecoderLayerCache::value_storage,
            &DecoderLayerCache::memory_keys,
            &DecoderLayerCache::memory_values}) {
        second.*member = (state.layers[0].*member).clone();
      }
      state.layers.push_back(second);
      return state;
    };
    DecoderState state = two_layers();
    if (with_room) state.Append(FreshRows(1, 4, 10.0f, 2));
    ASSERT_EQ(state.row_capacity > 0, with_room);
    const DecoderState before = InUse(state);
    DecoderState other = FreshRows(2, 3, 20.0f, 2);
    other.layers[1].memory_keys = other.layers[1].memory_keys.narrow(3, 0, 2);
    EXPECT_ANY_THROW(state.Append(other));
    ExpectEqual(InUse(state), before);

    // And it still merges well-formed rows, but only rows that have decoded
    // nothing yet, of as many layers.
    const int64_t rows = state.batch_size();
    state.Append(FreshRows(2, 3, 20.0f, 2));
    EXPECT_EQ(state.batch_size(), rows + 2);
    EXPECT_THROW(state.Append(two_layers()), std::invalid_argument);
    EXPECT_THROW(state.Append(FreshRows(2, 3, 20.0f, 1)),
                 std::invalid_argument);
    EXPECT_EQ(state.batch_size(), rows + 2);
  }
}

}  // namespace
}  // namespace fanyi
