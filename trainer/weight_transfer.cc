#include "trainer/weight_transfer.h"

#include <torch/torch.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace fanyi {
namespace {

// For each token of `to`, its id in `from`, or -1.
std::vector<int64_t> SameTokens(const Vocabulary& from, const Vocabulary& to) {
  std::vector<int64_t> ids(static_cast<size_t>(to.size()), -1);
  for (int64_t id = 0; id < from.size(); ++id) {
    const int64_t at = to.Id(from.Token(id));
    // Id() answers <unk> for a token it does not hold.
    if (at != Vocabulary::kUnkId || id == Vocabulary::kUnkId) ids[at] = id;
  }
  return ids;
}

// Copies the rows of `from` [from_vocab, ·] (or [from_vocab]) into `to`'s
// rows of the same tokens; returns how many were copied.
int64_t CopyRows(const torch::Tensor& from, torch::Tensor& to,
                 const std::vector<int64_t>& from_ids) {
  int64_t copied = 0;
  for (size_t row = 0; row < from_ids.size(); ++row) {
    if (from_ids[row] < 0) continue;
    to[static_cast<int64_t>(row)].copy_(from[from_ids[row]]);
    ++copied;
  }
  return copied;
}

}  // namespace

WeightTransfer TransferWeights(const Checkpoint& from, Checkpoint& to) {
  const std::vector<int64_t> source_ids =
      SameTokens(from.source_vocabulary, to.source_vocabulary);
  const std::vector<int64_t> target_ids =
      SameTokens(from.target_vocabulary, to.target_vocabulary);
  torch::NoGradGuard no_grad;
  auto given = from.model->named_parameters();
  auto wanted = to.model->named_parameters();
  if (given.size() != wanted.size()) {
    throw std::invalid_argument(
        "the model to start from has " + std::to_string(given.size()) +
        " parameters, this one " + std::to_string(wanted.size()) +
        ": another layer count or tying of the target embedding");
  }
  WeightTransfer transfer;
  for (auto& item : wanted) {
    const std::string& name = item.key();
    torch::Tensor& target = item.value();
    const torch::Tensor* source = given.find(name);
    if (source == nullptr) {
      throw std::invalid_argument("the model to start from has no " + name);
    }
    const torch::Tensor value = source->to(target.device());
    // Tables with a row per token: [vocab, d_model], or the generator's
    // [vocab] bias.
    const bool source_table = name == "source_embedding.weight";
    const bool target_table = name == "target_embedding.weight" ||
                              name == "generator.weight" ||
                              name == "generator.bias";
    const bool same_shape =
        source_table || target_table
            ? value.sizes().slice(1) == target.sizes().slice(1)
            : value.sizes() == target.sizes();
    if (!same_shape) {
      throw std::invalid_argument("the model to start from has " + name +
                                  " of shape " + c10::str(value.sizes()) +
                                  ", this one " + c10::str(target.sizes()));
    }
    if (source_table) {
      transfer.source_tokens_found = CopyRows(value, target, source_ids);
    } else if (target_table) {
      transfer.target_tokens_found = CopyRows(value, target, target_ids);
    } else {
      target.copy_(value);
    }
  }
  return transfer;
}

}  // namespace fanyi
