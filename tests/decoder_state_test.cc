#include "common/model/decoder_state.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/full.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "common/model/process_memory.h"
#include "common/model/single_query_attention.h"

namespace fanyi {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// Five rows, each reading its own cache row; row r's caches hold the value r,
// and the rows joined at columns {3, 2, 4, 4, 4} (-inf before) with sources
// of lengths {2, 3, 3, 4, 1} (-inf after). Columns 2..5 of 16 are in use.
DecoderState FiveRows(size_t layers = 1) {
  const std::vector<int64_t> joined = {3, 2, 4, 4, 4};
  const std::vector<int64_t> source_lengths = {2, 3, 3, 4, 1};
  DecoderState state;
  state.first_column = 2;
  state.end_column = 6;
  state.positions = at::arange(5, at::kLong);
  state.self_rows = at::arange(5, at::kLong).unsqueeze(1).repeat({1, 16});
  state.memory_rows = at::arange(5, at::kLong);
  state.row_first_columns = joined;
  state.row_source_lengths = source_lengths;
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
  for (size_t i = 0; i < layers; ++i) {
    DecoderLayerCache copy;
    for (auto member :
         {&DecoderLayerCache::key_storage, &DecoderLayerCache::value_storage,
          &DecoderLayerCache::memory_keys, &DecoderLayerCache::memory_values}) {
      copy.*member = (layer.*member).clone();
    }
    state.layers.push_back(copy);
  }
  return state;
}

// `rows` rows that have decoded nothing yet, as Append takes them, with
// `layers` layers shaped like FiveRows' (16 columns, 2 heads, d_k 3): sources
// of `source_length` positions, their cross-attention keys and values all
// `value`.
DecoderState FreshRows(int64_t rows, int64_t source_length, float value,
                       size_t layers = 1) {
  DecoderState state;
  state.positions = at::zeros({rows}, at::kLong);
  state.self_rows = at::zeros({rows, 16}, at::kLong);
  state.memory_rows = at::arange(rows, at::kLong);
  state.source_capacity = source_length;
  state.row_first_columns.assign(rows, 0);
  state.row_source_lengths.assign(rows, source_length);
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

// What each row of a state reads over the columns in use, copied out of the
// caches through the tables.
struct Seen {
  torch::Tensor positions;    // [batch]
  torch::Tensor source_bias;  // [batch, 1, 1, src_len]
  torch::Tensor self_bias;    // [batch, 1, 1, columns]
  // Per layer: keys, values, memory keys, memory values, each
  // [batch, heads, ·, d_k].
  std::vector<std::vector<torch::Tensor>> layers;
};

Seen SeenBy(const DecoderState& state) {
  Seen seen{state.positions.clone(),
            state.source_bias.clone(),
            state.self_bias().clone(),
            {}};
  for (const DecoderLayerCache& layer : state.layers) {
    seen.layers.push_back(
        {GatherCacheRows(
             layer.key_storage.narrow(2, state.first_column, state.columns()),
             state.self_rows_in_use()),
         GatherCacheRows(
             layer.value_storage.narrow(2, state.first_column, state.columns()),
             state.self_rows_in_use()),
         layer.memory_keys.index_select(0, state.memory_rows),
         layer.memory_values.index_select(0, state.memory_rows)});
  }
  return seen;
}

void ExpectSame(const Seen& actual, const Seen& expected) {
  EXPECT_TRUE(at::equal(actual.positions, expected.positions));
  EXPECT_TRUE(at::equal(actual.source_bias, expected.source_bias));
  EXPECT_TRUE(at::equal(actual.self_bias, expected.self_bias));
  ASSERT_EQ(actual.layers.size(), expected.layers.size());
  for (size_t i = 0; i < actual.layers.size(); ++i) {
    for (size_t t = 0; t < 4; ++t) {
      EXPECT_TRUE(at::equal(actual.layers[i][t], expected.layers[i][t]))
          << "layer " << i << " tensor " << t;
    }
  }
}

TEST(DecoderStateTest, RemoveRowsMovesTheLastRowsIntoTheGaps) {
  DecoderState state = FiveRows();
  const Seen before = SeenBy(state);
  const void* key_data = state.layers[0].key_storage.data_ptr();

  const std::vector<int64_t> order = state.RemoveRows({1, 3});

  // Row 4 moved into row 1's place; rows 0 and 2 stayed.
  EXPECT_EQ(order, (std::vector<int64_t>{0, 4, 2}));
  ASSERT_EQ(state.batch_size(), 3);
  EXPECT_TRUE(at::equal(state.positions, at::tensor({0, 4, 2}, at::kLong)));
  // Only the tables moved: the cache kept its storage and its rows.
  EXPECT_EQ(state.layers[0].key_storage.data_ptr(), key_data);
  EXPECT_EQ(state.cache_rows(), 5);
  // Row 1 (joined at column 2) left, so the oldest row joined at column 3;
  // row 3 (the only source of length 4) left, so sources end at 3.
  EXPECT_EQ(state.first_column, 3);
  EXPECT_EQ(state.end_column, 6);
  EXPECT_EQ(state.source_bias.size(3), 3);
  const Seen after = SeenBy(state);
  for (int64_t r = 0; r < 3; ++r) {
    const int64_t was = order[r];
    EXPECT_TRUE(
        at::equal(after.self_bias[r], before.self_bias[was].narrow(2, 1, 3)))
        << r;
    EXPECT_TRUE(at::equal(after.source_bias[r],
                          before.source_bias[was].narrow(2, 0, 3)))
        << r;
    for (size_t t = 0; t < 2; ++t) {
      EXPECT_TRUE(at::equal(after.layers[0][t][r],
                            before.layers[0][t][was].narrow(1, 1, 3)))
          << r;
    }
    for (size_t t = 2; t < 4; ++t) {
      EXPECT_TRUE(at::equal(after.layers[0][t][r],
                            before.layers[0][t][was].narrow(1, 0, 3)))
          << r;
    }
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
// Each row then reads the columns of the row it became, where they are.
TEST(DecoderStateTest, ReorderRowsMakesEachRowItsListedRow) {
  struct Case {
    std::vector<int64_t> order;
    int64_t first_column;  // Of the oldest remaining row.
  };
  for (const Case& test_case :
       {Case{{0, 1, 1, 3}, 2}, Case{{2, 2, 0, 1}, 2}, Case{{3, 0, 4}, 3}}) {
    DecoderState state = FiveRows();
    const Seen before = SeenBy(state);
    const void* key_data = state.layers[0].key_storage.data_ptr();
    const std::vector<int64_t>& order = test_case.order;
    state.ReorderRows(order);
    const auto rows = static_cast<int64_t>(order.size());
    ASSERT_EQ(state.batch_size(), rows);
    EXPECT_EQ(state.layers[0].key_storage.data_ptr(), key_data);
    EXPECT_TRUE(at::equal(state.positions, at::tensor(order, at::kLong)));
    EXPECT_EQ(state.first_column, test_case.first_column);
    const int64_t skipped = test_case.first_column - 2;
    const int64_t used = 6 - test_case.first_column;
    const Seen after = SeenBy(state);
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_TRUE(
          at::equal(after.layers[0][0][r],
                    before.layers[0][0][order[r]].narrow(1, skipped, used)))
          << r;
      EXPECT_TRUE(
          at::equal(after.self_bias[r],
                    before.self_bias[order[r]].narrow(2, skipped, used)))
          << r;
    }
  }
  DecoderState state = FiveRows();
  EXPECT_THROW(state.ReorderRows({0, 5}), std::invalid_argument);
  EXPECT_THROW(state.ReorderRows({-1}), std::invalid_argument);
}

// A beam search's first row fans out into its beams: more rows than the
// caches hold. The caches grow (each row's columns moved into its own cache
// row), every row reads what the row it copies read, and each then writes
// its next column into its own cache row.
TEST(DecoderStateTest, RowsFanningOutBeyondTheCacheRowsGrowTheCaches) {
  DecoderState state = FiveRows();
  const Seen before = SeenBy(state);
  const std::vector<int64_t> order = {0, 1, 1, 1, 1, 2, 3, 4};
  state.ReorderRows(order);
  ASSERT_EQ(state.batch_size(), 8);
  EXPECT_EQ(state.cache_rows(), 16);
  const Seen after = SeenBy(state);
  for (int64_t r = 0; r < 8; ++r) {
    EXPECT_TRUE(at::equal(after.positions[r], before.positions[order[r]])) << r;
    EXPECT_TRUE(at::equal(after.self_bias[r], before.self_bias[order[r]])) << r;
    for (size_t t = 0; t < 4; ++t) {
      EXPECT_TRUE(
          at::equal(after.layers[0][t][r], before.layers[0][t][order[r]]))
          << r << " tensor " << t;
    }
  }
  const int64_t column = state.AddColumn();
  for (int64_t r = 0; r < 8; ++r) {
    state.layers[0].key_storage[r].narrow(1, column, 1).fill_(100.0f + r);
  }
  const Seen next = SeenBy(state);
  for (int64_t r = 0; r < 8; ++r) {
    const torch::Tensor keys = next.layers[0][0][r];  // [heads, columns, d_k]
    EXPECT_TRUE(at::equal(keys.narrow(1, keys.size(1) - 1, 1),
                          at::full({2, 1, 3}, 100.0f + r)))
        << r;
    EXPECT_TRUE(at::equal(keys.narrow(1, 0, keys.size(1) - 1),
                          before.layers[0][0][order[r]]))
        << r;
  }
}

// Two beams that extend one parent read its columns from where the parent
// wrote them, and each writes its next column into its own cache row.
TEST(DecoderStateTest, BeamsReadTheirParentsColumnsAndWriteTheirOwn) {
  DecoderState state = FiveRows();
  state.ReorderRows({1, 1, 2});
  const int64_t column = state.AddColumn();
  EXPECT_EQ(column, 6);
  DecoderLayerCache& layer = state.layers[0];
  for (int64_t r = 0; r < 3; ++r) {
    layer.key_storage[r].narrow(1, column, 1).fill_(100.0f + r);
  }
  const Seen seen = SeenBy(state);
  const std::vector<float> parents = {1, 1, 2};
  for (int64_t r = 0; r < 3; ++r) {
    const torch::Tensor keys = seen.layers[0][0][r];  // [heads, 5, d_k]
    EXPECT_TRUE(
        at::equal(keys.narrow(1, 0, 4), at::full({2, 4, 3}, parents[r])))
        << r;
    EXPECT_TRUE(
        at::equal(keys.narrow(1, 4, 1), at::full({2, 1, 3}, 100.0f + r)))
        << r;
  }
}

// The first Append moves every row to caches with room; later ones write
// only the new rows' sources, into cache rows no row reads, the caches
// staying where they are, even when the new sources are longer than any
// before.
TEST(DecoderStateTest, AppendWithRoomWritesOnlyTheNewSources) {
  DecoderState state = FiveRows();
  state.Append(FreshRows(1, 4, 10.0f));
  ASSERT_EQ(state.cache_rows(), 12);
  ASSERT_EQ(state.source_capacity, 8);
  EXPECT_EQ(state.first_column, 0);  // The columns in use moved first.
  EXPECT_EQ(state.end_column, 4);
  const Seen before = SeenBy(state);
  const void* key_data = state.layers[0].key_storage.data_ptr();
  const void* memory_data = state.layers[0].memory_keys.data_ptr();

  state.Append(FreshRows(2, 6, 20.0f));

  ASSERT_EQ(state.batch_size(), 8);
  EXPECT_EQ(state.layers[0].key_storage.data_ptr(), key_data);
  EXPECT_EQ(state.layers[0].memory_keys.data_ptr(), memory_data);
  EXPECT_EQ(state.first_column, 0);
  EXPECT_EQ(state.end_column, 4);
  ASSERT_EQ(state.source_bias.size(3), 6);
  const Seen after = SeenBy(state);
  for (int64_t r = 0; r < 6; ++r) {
    for (size_t t = 0; t < 2; ++t) {
      EXPECT_TRUE(at::equal(after.layers[0][t][r], before.layers[0][t][r]))
          << r;
    }
    EXPECT_TRUE(at::equal(after.self_bias[r], before.self_bias[r])) << r;
    EXPECT_TRUE(at::equal(after.layers[0][2][r].narrow(1, 0, 4),
                          before.layers[0][2][r]))
        << r;
    // Past their sources: zero keys, -inf bias.
    EXPECT_TRUE(
        at::equal(after.layers[0][2][r].narrow(1, 4, 2), at::zeros({2, 2, 3})))
        << r;
    EXPECT_TRUE(at::equal(after.source_bias[r].narrow(2, 4, 2),
                          at::full({1, 1, 2}, kMinusInfinity)))
        << r;
  }
  for (int64_t r = 6; r < 8; ++r) {
    EXPECT_TRUE(
        at::equal(after.self_bias[r], at::full({1, 1, 4}, kMinusInfinity)))
        << r;
    EXPECT_TRUE(at::equal(after.layers[0][3][r], at::full({2, 6, 3}, 20.0f)))
        << r;
    EXPECT_TRUE(at::equal(after.source_bias[r], at::zeros({1, 1, 6}))) << r;
  }
  EXPECT_TRUE(at::equal(state.positions,
                        at::tensor({0, 1, 2, 3, 4, 0, 0, 0}, at::kLong)));
}

// Rows that leave, beams that reorder and columns that grow keep what each
// row reads and the room: the next Append still writes in place, into
// cache rows that no remaining row reads.
TEST(DecoderStateTest, ReorderAndGrowthKeepWhatRowsReadAndTheRoom) {
  DecoderState state = FiveRows();
  state.Append(FreshRows(1, 4, 10.0f));
  state.ReorderRows({5, 4, 4, 2, 1});
  state.RemoveRows({0});
  const Seen before = SeenBy(state);
  while (state.end_column < state.self_bias_storage.size(3)) {
    state.AddColumn();
  }
  const int64_t used = state.columns();
  state.AddColumn();  // Full: the columns move to wider storages.
  EXPECT_EQ(state.cache_rows(), 12);
  EXPECT_EQ(state.first_column, 0);
  const Seen grown = SeenBy(state);
  for (size_t t = 0; t < 2; ++t) {
    EXPECT_TRUE(
        at::equal(grown.layers[0][t].narrow(2, 0, before.self_bias.size(3)),
                  before.layers[0][t]))
        << t;
  }
  EXPECT_EQ(used + 1, state.columns());

  const void* key_data = state.layers[0].key_storage.data_ptr();
  state.Append(FreshRows(2, 4, 20.0f));
  EXPECT_EQ(state.layers[0].key_storage.data_ptr(), key_data);
  ASSERT_EQ(state.batch_size(), 6);
  const Seen appended = SeenBy(state);
  // The remaining sources were at most 3 long; the new ones are 4.
  const int64_t kept_source = grown.source_bias.size(3);
  ASSERT_EQ(kept_source, 3);
  for (size_t t = 2; t < 4; ++t) {
    EXPECT_TRUE(at::equal(
        appended.layers[0][t].narrow(0, 0, 4).narrow(2, 0, kept_source),
        grown.layers[0][t]))
        << t;
    EXPECT_TRUE(at::equal(appended.layers[0][t].narrow(0, 4, 2),
                          at::full({2, 2, 4, 3}, 20.0f)))
        << t;
  }
}

// Rows may join a state that every row has left, into the room it kept.
TEST(DecoderStateTest, RowsJoinAStateEveryRowLeft) {
  DecoderState state = FiveRows();
  state.Append(FreshRows(1, 4, 10.0f));
  state.ReorderRows({});
  ASSERT_EQ(state.batch_size(), 0);
  const void* key_data = state.layers[0].key_storage.data_ptr();
  state.Append(FreshRows(2, 3, 20.0f));
  EXPECT_EQ(state.layers[0].key_storage.data_ptr(), key_data);
  ASSERT_EQ(state.batch_size(), 2);
  const Seen seen = SeenBy(state);
  EXPECT_TRUE(at::equal(seen.layers[0][2].narrow(2, 0, 3),
                        at::full({2, 2, 3, 3}, 20.0f)));
  EXPECT_TRUE(at::equal(seen.self_bias,
                        at::full({2, 1, 1, state.columns()}, kMinusInfinity)));
}

// The rows of a beam search read one copy of their source, in the state
// that StartDecoding makes and after every Append, with room or without.
TEST(DecoderStateTest, BeamRowsShareOneCopyOfTheirSource) {
  // Two sources of three rows each, their keys 30 and 40.
  DecoderState beams = FreshRows(2, 4, 30.0f);
  for (auto member :
       {&DecoderLayerCache::memory_keys, &DecoderLayerCache::memory_values}) {
    beams.layers[0].*member =
        at::cat({at::full({1, 2, 4, 3}, 30.0f), at::full({1, 2, 4, 3}, 40.0f)});
  }
  beams.memory_rows = at::tensor({0, 0, 0, 1, 1, 1}, at::kLong);
  beams.row_first_columns.assign(6, 0);
  beams.row_source_lengths.assign(6, 4);
  beams.positions = at::zeros({6}, at::kLong);
  beams.self_rows = at::zeros({6, 16}, at::kLong);
  beams.self_bias_storage = at::zeros({6, 1, 1, 16});
  beams.source_bias = at::zeros({6, 1, 1, 4});
  for (auto member :
       {&DecoderLayerCache::key_storage, &DecoderLayerCache::value_storage}) {
    beams.layers[0].*member = at::zeros({6, 2, 16, 3});
  }
  auto expect_sources = [](const DecoderState& state,
                           const std::vector<float>& values) {
    const Seen seen = SeenBy(state);
    ASSERT_EQ(state.batch_size(), static_cast<int64_t>(values.size()));
    for (size_t r = 0; r < values.size(); ++r) {
      EXPECT_TRUE(at::equal(seen.layers[0][2][r].narrow(1, 0, 4),
                            at::full({2, 4, 3}, values[r])))
          << r;
    }
  };
  DecoderState state = FiveRows();
  state.Append(beams);  // No room: every source moves, each once.
  EXPECT_EQ(state.layers[0].memory_keys.size(0), 2 * 11);
  expect_sources(state, {0, 1, 2, 3, 4, 30, 30, 30, 40, 40, 40});
  const void* memory_data = state.layers[0].memory_keys.data_ptr();
  // The last rows move into the gaps: 30, 30, 40, 40, 40, 30.
  state.RemoveRows({0, 1, 2, 3, 4});
  state.Append(beams);  // Room: two cache rows written, read by six rows.
  EXPECT_EQ(state.layers[0].memory_keys.data_ptr(), memory_data);
  expect_sources(state, {30, 30, 40, 40, 40, 30, 30, 30, 30, 40, 40, 40});
  state.Append(FreshRows(12, 4, 50.0f));  // No room: shared sources stay so.
  std::vector<float> expected = {30, 30, 40, 40, 40, 30,
                                 30, 30, 30, 40, 40, 40};
  expected.insert(expected.end(), 12, 50.0f);
  expect_sources(state, expected);
  const torch::Tensor rows = state.memory_rows.contiguous();
  const std::set<int64_t> distinct(rows.data_ptr<int64_t>(),
                                   rows.data_ptr<int64_t>() + rows.numel());
  EXPECT_EQ(distinct.size(), 4u + 12u);
}

// Append builds the merged state aside: a failure part-way through (here
// the second layer's cross-attention keys have the wrong width, so the
// merge throws after the first layer is done) leaves what every row reads
// as it was, whether the caches had room for the new rows (their sources
// written into cache rows no row reads) or not (every row moved to new
// caches).
TEST(DecoderStateTest, FailedAppendLeavesTheStateAsItWas) {
  for (const bool with_room : {false, true}) {
    SCOPED_TRACE(with_room ? "with room" : "without room");
    DecoderState state = FiveRows(2);
    if (with_room) state.Append(FreshRows(1, 4, 10.0f, 2));
    ASSERT_EQ(state.cache_rows() > state.batch_size(), with_room);
    const Seen before = SeenBy(state);
    const int64_t first_column = state.first_column;
    DecoderState other = FreshRows(2, 3, 20.0f, 2);
    other.layers[1].memory_keys = other.layers[1].memory_keys.narrow(3, 0, 2);
    EXPECT_ANY_THROW(state.Append(other));
    EXPECT_EQ(state.first_column, first_column);
    ExpectSame(SeenBy(state), before);

    // And it still merges well-formed rows, but only rows that have decoded
    // nothing yet, of as many layers.
    const int64_t rows = state.batch_size();
    state.Append(FreshRows(2, 3, 20.0f, 2));
    EXPECT_EQ(state.batch_size(), rows + 2);
    EXPECT_THROW(state.Append(FiveRows(2)), std::invalid_argument);
    EXPECT_THROW(state.Append(FreshRows(2, 3, 20.0f, 1)),
                 std::invalid_argument);
    EXPECT_EQ(state.batch_size(), rows + 2);
  }
}

// Checks the records a state keeps of its rows on the host against what
// its biases say: row r owns the columns from row_first_columns[r] on, and
// its source has row_source_lengths[r] real positions.
void ExpectRecordsMatchBiases(const DecoderState& state) {
  const int64_t batch = state.batch_size();
  ASSERT_EQ(state.row_first_columns.size(), size_t(batch));
  ASSERT_EQ(state.row_source_lengths.size(), size_t(batch));
  const torch::Tensor self_bias = state.self_bias_storage.flatten(1);
  const torch::Tensor source_bias = state.source_bias.flatten(1);
  for (int64_t r = 0; r < batch; ++r) {
    for (int64_t c = state.first_column; c < state.end_column; ++c) {
      EXPECT_EQ(self_bias[r][c].item<float>() == 0,
                c >= state.row_first_columns[r])
          << "row " << r << " column " << c;
    }
    for (int64_t p = 0; p < source_bias.size(1); ++p) {
      EXPECT_EQ(source_bias[r][p].item<float>() == 0,
                p < state.row_source_lengths[r])
          << "row " << r << " source position " << p;
    }
  }
}

// A random run of joins (sources of several lengths), steps, leaves and
// beam reorders: the records on the host stay those the biases hold, and
// after each reorder the columns and source positions kept are exactly
// those some row uses, as reading the biases back would find them.
TEST(DecoderStateTest, RowRecordsOnTheHostFollowTheBiases) {
  std::mt19937 random(7);
  DecoderState state = FiveRows();
  ExpectRecordsMatchBiases(state);
  for (int op = 0; op < 300; ++op) {
    const int64_t batch = state.batch_size();
    // 0: rows join, 1: a step's column, 2: rows leave, 3: beams reorder.
    int kind = std::uniform_int_distribution<int>(0, 3)(random);
    if (batch == 0) kind = 0;
    if (kind == 0) {
      const int64_t rows = std::uniform_int_distribution<int64_t>(1, 3)(random);
      const int64_t length =
          std::uniform_int_distribution<int64_t>(1, 6)(random);
      DecoderState fresh = FreshRows(rows, length, float(op));
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t own =
            std::uniform_int_distribution<int64_t>(1, length)(random);
        fresh.source_bias[r].narrow(2, own, length - own).fill_(kMinusInfinity);
        fresh.row_source_lengths[r] = own;
      }
      state.Append(fresh);
    } else if (kind == 1) {
      state.AddColumn();
    } else if (kind == 2) {
      std::vector<int64_t> removed;
      for (int64_t r = 0; r < batch; ++r) {
        if (std::bernoulli_distribution(0.3)(random)) removed.push_back(r);
      }
      state.RemoveRows(removed);
    } else {
      std::vector<int64_t> order;
      const int64_t rows =
          std::uniform_int_distribution<int64_t>(1, 2 * batch)(random);
      for (int64_t i = 0; i < rows; ++i) {
        order.push_back(
            std::uniform_int_distribution<int64_t>(0, batch - 1)(random));
      }
      state.ReorderRows(order);
    }
    ASSERT_NO_FATAL_FAILURE(ExpectRecordsMatchBiases(state)) << "op " << op;
    if (kind >= 2 && state.batch_size() > 0) {
      // Some row owns the first column in use (unless none owns any), and
      // some row's source reaches the last position kept.
      const torch::Tensor owned =
          state.self_bias().flatten(1).eq(0).any(0).to(at::kLong);
      if (state.columns() > 0 && owned.sum().item<int64_t>() > 0) {
        EXPECT_EQ(owned[0].item<int64_t>(), 1) << "op " << op;
      }
      EXPECT_EQ(state.source_bias.flatten(1)
                    .eq(0)
                    .any(0)[state.source_bias.size(3) - 1]
                    .item<bool>(),
                true)
          << "op " << op;
    }
  }
}

// The pages a process has faulted in so far.
long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// A block of the size a step's logits or a cache move takes, freed and
// allocated again, comes back without a page fault: without
// KeepFreedMemoryForReuse, glibc maps it afresh and each of its 2,048
// pages faults again.
TEST(ProcessMemoryTest, AFreedBlockIsReusedWithoutFaultingAgain) {
  // GCC says so with __SANITIZE_*__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's allocator replaces glibc's malloc";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "a sanitizer's allocator replaces glibc's malloc";
#endif
#endif
  KeepFreedMemoryForReuse();
  constexpr size_t kBytes = 8 << 20;
  char* block = static_cast<char*>(std::malloc(kBytes));
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBytes);
  asm volatile("" : : "r"(block) : "memory");  // The stores happen.
  std::free(block);
  const long before = MinorFaults();
  block = static_cast<char*>(std::malloc(kBytes));
  ASSERT_NE(block, nullptr);
  std::memset(block, 2, kBytes);
  asm volatile("" : : "r"(block) : "memory");
  const long faults = MinorFaults() - before;
  std::free(block);
  EXPECT_LT(faults, 64) << "of " << kBytes / 4096 << " pages";
}

}  // namespace
}  // namespace fanyi
