#ifndef FANYI_COMMON_DECODING_GREEDY_WINDOW_H_
#define FANYI_COMMON_DECODING_GREEDY_WINDOW_H_

#include <cstdint>
#include <vector>

namespace fanyi {

struct DecoderState;
class StepGraphs;
class TransformerImpl;

// Where a window of greedy steps starts: per batch row, the token it feeds
// next, the tokens it has generated so far and the most it may.
struct GreedyWindowStart {
  std::vector<int64_t> last_tokens;
  std::vector<int64_t> lengths;
  std::vector<int64_t> limits;
  int64_t min_length = 0;  // DecodingOptions::min_length.
};

// What a window of greedy steps did to each batch row, read back from the
// device in one copy at its end.
struct GreedyWindow {
  int64_t steps = 0;  // Steps run.
  // Per row: the tokens it chose, in order, without </s>.
  std::vector<std::vector<int64_t>> tokens;
  std::vector<char> finished;  // It ended: </s>, or its limit reached.
  std::vector<char> ended;     // It chose </s>.
  // The log-probabilities of its choices (</s> included), summed.
  std::vector<double> log_probabilities;
};

// The most steps a window from `start` may run, at most `steps`
// (WindowSteps over its rows).
int64_t GreedyWindowSteps(const GreedyWindowStart& start, int64_t steps);

// Runs `steps` greedy steps of every row of `state` on the model's device,
// choosing each row's next token there as the host's greedy step does (the
// argmax of its logits in float, ties to the lowest token, </s> held back
// below `start.min_length` tokens), and deciding there whether the row
// ended, without reading anything back until the last step: on a GPU the
// host queues every step's work without waiting on the device, and a step
// captured as a CUDA graph replays through the whole window, whose rows do
// not change. A row that ends goes on stepping to the window's end (its
// work is wasted, its choices ignored). Throws std::invalid_argument when
// `start` does not have one entry per row or `steps` is not within 1 and
// GreedyWindowSteps(start, steps).
GreedyWindow RunGreedyWindow(TransformerImpl& model, DecoderState& state,
                             StepGraphs* graphs, const GreedyWindowStart& start,
                             int64_t steps);

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_GREEDY_WINDOW_H_
