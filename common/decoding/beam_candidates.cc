#include "common/decoding/beam_candidates.h"

#include <ATen/ops/log_softmax.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/topk.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace fanyi {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// The plain-loop path: `logits` a float CPU tensor.
void TopOnCpu(const torch::Tensor& logits, const std::vector<int64_t>& rows,
              const std::vector<double>& beam_scores, int64_t beam_rows,
              BeamCandidates& candidates) {
  const torch::Tensor contiguous = logits.contiguous();
  const float* data = contiguous.data_ptr<float>();
  const int64_t vocab = contiguous.size(1);
  // [batch]: log Σ exp of each row, in ATen's vectorized loops (a scalar
  // exp per logit costs more than all the rest).
  const torch::Tensor log_sums = at::logsumexp(contiguous, {1});
  const float* log_sum = log_sums.data_ptr<float>();
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
      const double base = beam_scores[row] - log_sum[logits_row];
      for (int64_t v = 0; v < vocab; ++v) {
        const double total = base + x[v];
        if (kept == count && !(total > totals[count - 1])) continue;
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
      }
    }
  }
}

}  // namespace

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
  auto [top_totals, top_indices] = at::topk(totals, candidates.count, -1);
  top_totals = top_totals.to(at::kCPU, at::kDouble).contiguous();
  top_indices = top_indices.to(at::kCPU).contiguous();
  std::copy_n(top_totals.data_ptr<double>(), candidates.totals.size(),
              candidates.totals.begin());
  std::copy_n(top_indices.data_ptr<int64_t>(), candidates.indices.size(),
              candidates.indices.begin());
  return candidates;
}

}  // namespace fanyi
