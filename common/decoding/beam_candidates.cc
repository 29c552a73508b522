#include "common/decoding/beam_candidates.h"

#include <ATen/ops/argmax.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/topk.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/decoding/cpu_isa.h"
#include "common/decoding/vector_math.h"

namespace fanyi {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();
constexpr float kFloatInfinity = std::numeric_limits<float>::infinity();

constexpr int kLanes = 16;

// log Σ e^x over a row of `size` floats, in double: the largest value, then
// the sum of e^(x - largest), each in sixteen lanes the compiler vectorizes.
// (One call per row of the generator's output: a scalar exp per logit, or
// ATen's logsumexp with its passes and temporaries, cost more than all the
// rest of the selection.) RowLogSumExpBelow is the second half, for a row
// whose largest value is known.
FANYI_CPU_CLONES double RowLogSumExpBelow(const float* x, int64_t size,
                                          float largest) {
  if (std::isinf(largest)) return largest;  // Every value -inf (or one +inf).
  float partial[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= size; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      partial[lane] += ExpOfNonPositive(x[i + lane] - largest);
    }
  }
  double sum = 0;
  for (int lane = 0; lane < kLanes; ++lane) sum += partial[lane];
  for (; i < size; ++i) sum += ExpOfNonPositive(x[i] - largest);
  return largest + std::log(sum);
}

FANYI_CPU_CLONES double RowLogSumExp(const float* x, int64_t size) {
  float largest_lane[kLanes];
  std::fill(largest_lane, largest_lane + kLanes, -kFloatInfinity);
  int64_t i = 0;
  for (; i + kLanes <= size; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      largest_lane[lane] = std::max(largest_lane[lane], x[i + lane]);
    }
  }
  float largest = *std::max_element(largest_lane, largest_lane + kLanes);
  for (int64_t j = i; j < size; ++j) largest = std::max(largest, x[j]);
  return RowLogSumExpBelow(x, size, largest);
}

// The first index from `from` on whose value is at least `threshold`, or
// `size`. Blocks of 64 values are skipped by their lane-wise maximum, which
// takes a few vector instructions where one comparison per value would take
// one or two each.
FANYI_CPU_CLONES int64_t FirstAtLeast(const float* x, int64_t from,
                                      int64_t size, float threshold) {
  constexpr int64_t kBlock = 64;
  int64_t i = from;
  for (; i + kBlock <= size; i += kBlock) {
    Floats16 part[4];
    std::memcpy(part, x + i, sizeof part);
    const Floats16 low = part[0] > part[1] ? part[0] : part[1];
    const Floats16 high = part[2] > part[3] ? part[2] : part[3];
    const Floats16 largest = low > high ? low : high;
    // Each lane -1 where the block reaches the threshold, 0 elsewhere.
    const auto reached = largest >= threshold;
    uint64_t words[sizeof reached / sizeof(uint64_t)];
    std::memcpy(words, &reached, sizeof words);
    uint64_t any = 0;
    for (const uint64_t word : words) any |= word;
    if (any != 0) break;
  }
  for (; i < size; ++i) {
    if (x[i] >= threshold) return i;
  }
  return size;
}

// The plain-loop path: `logits` a float CPU tensor. Once a sentence's list
// is full, a continuation gets in only if its logit beats the last entry's
// total less the row's base; FirstAtLeast skips to the next logit that may,
// using a float threshold a little below that bound, and the comparison in
// double decides.
void TopOnCpu(const torch::Tensor& logits, const std::vector<int64_t>& rows,
              const std::vector<double>& beam_scores, int64_t beam_rows,
              BeamCandidates& candidates) {
  const torch::Tensor contiguous = logits.contiguous();
  const float* data = contiguous.data_ptr<float>();
  const int64_t vocab = contiguous.size(1);
  const int64_t count = candidates.count;
  const auto sentences = static_cast<int64_t>(beam_scores.size()) / beam_rows;
  for (int64_t s = 0; s < sentences; ++s) {
    double* totals = candidates.totals.data() + s * count;
    int64_t* indices = candidates.indices.data() + s * count;
    std::fill(totals, totals + count, kMinusInfinity);
    std::fill(indices, indices + count, -1);
    int64_t kept = 0;  // Entries of totals[] filled so far.
    for (int64_t b = 0; b < beam_rows; ++b) {
      const int64_t row = s * beam_rows + b;
      const int64_t logits_row = rows.empty() ? row : rows[row];
      const float* x = data + logits_row * vocab;
      // A dead beam's continuations are all -inf: taken only to fill the
      // list, and then by index order, as the strict comparison below does.
      const bool dead = beam_scores[row] == kMinusInfinity;
      if (dead && kept == count) continue;
      const double base = beam_scores[row] - RowLogSumExp(x, vocab);
      int64_t v = 0;
      while (v < vocab) {
        if (kept == count) {
          if (dead) break;
          const double bound = totals[count - 1] - base;
          const double margin =
              1e-6 * (1 + std::abs(totals[count - 1]) + std::abs(base));
          v = FirstAtLeast(x, v, vocab, static_cast<float>(bound - margin));
          if (v == vocab) break;
        }
        const double total = base + x[v];
        if (kept == count && !(total > totals[count - 1])) {
          ++v;
          continue;
        }
        // Insert after every entry at least as good (lower indices win
        // ties: they were seen first).
        int64_t at = kept == count ? count - 1 : kept++;
        while (at > 0 && total > totals[at - 1]) {
          totals[at] = totals[at - 1];
          indices[at] = indices[at - 1];
          --at;
        }
        totals[at] = total;
        indices[at] = b * vocab + v;
        ++v;
      }
    }
  }
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> TopInIndexOrder(
    const torch::Tensor& totals, int64_t count) {
  auto [top, indices] = at::topk(totals, count, -1);
  // By index, then stably by total: [rows, count] each.
  auto [by_index, index_order] = at::sort(indices, -1);
  auto [sorted, total_order] = at::sort(top.gather(-1, index_order),
                                        /*stable=*/true, /*dim=*/-1,
                                        /*descending=*/true);
  return {sorted, by_index.gather(-1, total_order)};
}

BeamCandidates TopBeamCandidates(const torch::Tensor& logits,
                                 const std::vector<int64_t>& rows,
                                 const std::vector<double>& beam_scores,
                                 int64_t beam, int64_t beam_rows) {
  if (beam_rows == 0) beam_rows = beam;
  const int64_t row_count =
      rows.empty() ? logits.size(0) : static_cast<int64_t>(rows.size());
  if (beam < 1 || (beam_rows != beam && beam_rows != 1) ||
      static_cast<int64_t>(beam_scores.size()) != row_count ||
      row_count % beam_rows != 0) {
    throw std::invalid_argument(
        "TopBeamCandidates: " + std::to_string(beam_scores.size()) +
        " beam scores for " + std::to_string(row_count) +
        " rows in groups of " + std::to_string(beam_rows) + " (beam " +
        std::to_string(beam) + ")");
  }
  const int64_t vocab = logits.size(1);
  const int64_t sentences = row_count / beam_rows;
  BeamCandidates candidates;
  candidates.count = std::min(2 * beam, beam_rows * vocab);
  candidates.totals.resize(sentences * candidates.count);
  candidates.indices.resize(sentences * candidates.count);
  if (logits.device().is_cpu() && logits.scalar_type() == at::kFloat) {
    TopOnCpu(logits, rows, beam_scores, beam_rows, candidates);
    return candidates;
  }
  const torch::Tensor selected =
      rows.empty() ? logits
                   : logits.index_select(
                         0, at::tensor(rows, at::kLong).to(logits.device()));
  // [rows, vocab] -> [sentences, beam * vocab]: every continuation.
  const torch::Tensor log_probs = at::log_softmax(selected, -1);
  const torch::Tensor previous =
      at::tensor(beam_scores, at::kDouble).to(log_probs.options());
  const torch::Tensor totals =
      (log_probs + previous.unsqueeze(1)).view({sentences, beam_rows * vocab});
  auto [top_totals, top_indices] = TopInIndexOrder(totals, candidates.count);
  top_totals = top_totals.to(at::kCPU, at::kDouble).contiguous();
  top_indices = top_indices.to(at::kCPU).contiguous();
  std::copy_n(top_totals.data_ptr<double>(), candidates.totals.size(),
              candidates.totals.begin());
  std::copy_n(top_indices.data_ptr<int64_t>(), candidates.indices.size(),
              candidates.indices.begin());
  return candidates;
}

std::vector<BestToken> BestTokens(const torch::Tensor& logits,
                                  const std::vector<int64_t>& rows) {
  const int64_t row_count =
      rows.empty() ? logits.size(0) : static_cast<int64_t>(rows.size());
  std::vector<BestToken> best(row_count);
  if (logits.device().is_cpu() && logits.scalar_type() == at::kFloat) {
    const torch::Tensor contiguous = logits.contiguous();
    const int64_t vocab = contiguous.size(1);
    for (int64_t i = 0; i < row_count; ++i) {
      const float* x =
          contiguous.data_ptr<float>() + (rows.empty() ? i : rows[i]) * vocab;
      int64_t token = 0;
      for (int64_t v = 1; v < vocab; ++v) {
        if (x[v] > x[token] || (std::isnan(x[v]) && !std::isnan(x[token]))) {
          token = v;
        }
      }
      // The argmax is the largest value: one more pass, not two.
      best[i] = {token, x[token] - RowLogSumExpBelow(x, vocab, x[token])};
    }
    return best;
  }
  // Half-precision logits are summed in float.
  const torch::Tensor selected =
      (rows.empty() ? logits
                    : logits.index_select(
                          0, at::tensor(rows, at::kLong).to(logits.device())))
          .to(at::kFloat);
  // [rows, vocab] -> [rows]; both leave the device in one copy, as
  // doubles ([2, rows]), which hold any token id exactly.
  const torch::Tensor tokens = at::argmax(selected, -1);
  const torch::Tensor chosen =
      selected.gather(-1, tokens.unsqueeze(-1)).squeeze(-1) -
      at::logsumexp(selected, -1);
  const torch::Tensor both =
      at::stack({tokens.to(at::kDouble), chosen.to(at::kDouble)})
          .to(at::kCPU)
          .contiguous();
  const double* values = both.data_ptr<double>();
  for (int64_t i = 0; i < row_count; ++i) {
    best[i] = {static_cast<int64_t>(values[i]), values[row_count + i]};
  }
  return best;
}

}  // namespace fanyi
