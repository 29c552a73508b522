#include "common/decoding/greedy_window.h"

#include <ATen/ops/argmax.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/full.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/decoding/decoding_options.h"
#include "common/model/decoder_state.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"

namespace fanyi {

int64_t GreedyWindowSteps(const GreedyWindowStart& start, int64_t steps) {
  return WindowSteps(start.lengths, start.limits, steps);
}

GreedyWindow RunGreedyWindow(TransformerImpl& model, DecoderState& state,
                             StepGraphs* graphs, const GreedyWindowStart& start,
                             int64_t steps) {
  const int64_t rows = state.batch_size();
  const auto row_count = static_cast<size_t>(rows);
  if (start.last_tokens.size() != row_count ||
      start.lengths.size() != row_count || start.limits.size() != row_count) {
    throw std::invalid_argument(
        "RunGreedyWindow: " + std::to_string(start.last_tokens.size()) +
        " tokens, " + std::to_string(start.lengths.size()) + " lengths and " +
        std::to_string(start.limits.size()) + " limits for " +
        std::to_string(rows) + " rows");
  }
  if (steps < 1 || steps > GreedyWindowSteps(start, steps)) {
    throw std::invalid_argument("RunGreedyWindow: " + std::to_string(steps) +
                                " steps would take a row past its limit");
  }
  const torch::Device device = state.positions.device();
  const auto on_device = [&](const std::vector<int64_t>& values) {
    return at::tensor(values, at::kLong).to(device);  // [rows]
  };
  torch::Tensor tokens = on_device(start.last_tokens);
  torch::Tensor lengths = on_device(start.lengths);
  const torch::Tensor limits = on_device(start.limits);
  const torch::TensorOptions flags = state.positions.options().dtype(at::kBool);
  torch::Tensor finished = at::zeros({rows}, flags);
  torch::Tensor ended = at::zeros({rows}, flags);
  torch::Tensor log_probabilities = at::zeros({rows}, flags.dtype(at::kDouble));
  // [rows, steps]: each step's choice, -1 where a row chose nothing.
  torch::Tensor chosen = at::full({rows, steps}, -1, state.positions.options());
  state.wants_alignment = false;
  for (int64_t step = 0; step < steps; ++step) {
    // [rows, vocab]; a graph's own output, ours to change until the next
    // step.
    torch::Tensor logits = model.DecodeStep(tokens, &state, graphs);
    if (start.min_length > 0) {
      // As ContinuousBatch::HoldBackEnds.
      logits.select(1, Vocabulary::kEosId)
          .masked_fill_(lengths.lt(start.min_length),
                        -std::numeric_limits<float>::infinity());
    }
    // As BestTokens off the CPU: the argmax in float, its log-probability
    // from the log-sum-exp of the row. [rows, vocab] -> [rows] each.
    const torch::Tensor scores = logits.to(at::kFloat);
    const torch::Tensor best = at::argmax(scores, -1);
    const torch::Tensor log_probability =
        (scores.gather(-1, best.unsqueeze(-1)).squeeze(-1) -
         at::logsumexp(scores, -1))
            .to(at::kDouble);
    const torch::Tensor active = finished.logical_not();
    const torch::Tensor ends = active.logical_and(best.eq(Vocabulary::kEosId));
    const torch::Tensor grows = active.logical_and(ends.logical_not());
    chosen.select(1, step).copy_(best.masked_fill(grows.logical_not(), -1));
    log_probabilities += log_probability.masked_fill(finished, 0.0);
    lengths += grows.to(at::kLong);
    finished = finished.logical_or(ends).logical_or(lengths.ge(limits));
    ended = ended.logical_or(ends);
    tokens = at::where(grows, best, tokens);
  }
  // One copy to the host, [rows, steps + 2]: the choices, then 1 for a row
  // that finished plus 2 for one that chose </s>, then the bits of the
  // log-probabilities (a double is as wide as an int64).
  const torch::Tensor report =
      at::cat({chosen,
               (finished.to(at::kLong) + 2 * ended.to(at::kLong)).unsqueeze(1),
               log_probabilities.view(at::kLong).unsqueeze(1)},
              1)
          .to(at::kCPU)
          .contiguous();
  const int64_t* values = report.data_ptr<int64_t>();
  GreedyWindow window;
  window.steps = steps;
  window.tokens.resize(row_count);
  window.finished.resize(row_count);
  window.ended.resize(row_count);
  window.log_probabilities.resize(row_count);
  for (size_t r = 0; r < row_count; ++r) {
    const int64_t* row = values + r * (steps + 2);
    for (int64_t step = 0; step < steps && row[step] >= 0; ++step) {
      window.tokens[r].push_back(row[step]);
    }
    window.finished[r] = (row[steps] & 1) != 0;
    window.ended[r] = (row[steps] & 2) != 0;
    std::memcpy(&window.log_probabilities[r], &row[steps + 1], sizeof(double));
  }
  return window;
}

}  // namespace fanyi
