#ifndef FANYI_COMMON_DECODING_GREEDY_DECODER_H_
#define FANYI_COMMON_DECODING_GREEDY_DECODER_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

#include "common/decoding/decoding_options.h"
#include "common/model/model_config.h"

namespace fanyi {

class TransformerImpl;

// Source id rows -> [batch, width] on `device` in the form the model was
// trained on: each row ended by </s> when the model's sources are
// (ModelConfig::source_eos; an empty row always is, so that attention has a
// column to read), then <pad>.
at::Tensor MakeSourceTensor(const std::vector<std::vector<int64_t>>& sources,
                            const ModelConfig& config,
                            const c10::Device& device);

// Id rows -> [batch, max_len] on `device`, padded with <pad>.
at::Tensor PadRows(const std::vector<std::vector<int64_t>>& rows,
                   const c10::Device& device);

// Batched greedy decoding with the key/value cache: sources of any lengths in
// one batch, each row stops at </s> or its length limit and leaves the batch.
// Returns target ids per source (without </s>), in input order.
std::vector<std::vector<int64_t>> GreedyDecode(
    TransformerImpl& model, const std::vector<std::vector<int64_t>>& sources,
    const DecodingOptions& options);

// The tutorials' decoder, kept as a reference and a speed floor: one sentence,
// no cache, the whole prefix recomputed at every step. With `run_all_steps`
// it also goes on past </s> to the length limit, as the tutorials' decoder
// does; the ids returned still end before the first </s>.
std::vector<int64_t> GreedyDecodeWithoutCache(
    TransformerImpl& model, const std::vector<int64_t>& source,
    const DecodingOptions& options, bool run_all_steps = false);

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_GREEDY_DECODER_H_
