// How training measures a model on its dev set: the loss and the BLEU that
// choose best/ and show progress.
#ifndef FANYI_TRAINER_DEV_EVALUATION_H_
#define FANYI_TRAINER_DEV_EVALUATION_H_

#include <torch/torch.h>

#include <utility>
#include <vector>

#include "common/model/checkpoint.h"
#include "common/model/transformer.h"
#include "trainer/data_parallel.h"
#include "trainer/prepared_corpus.h"

namespace fanyi {

// Both measures go through the dev set in batches of sources of similar
// lengths, the same batches whatever the number of ranks. With a `group`
// (a data-parallel run), every rank must call them at the same point: each
// rank takes every world_size-th batch, from its rank on, and every rank
// gets the measure of the whole dev set, as one process would compute it.
// Null: this process measures it all.

// Mean loss per target token of `model` (in eval mode) on `dev`, without
// label smoothing or autograd, on `device`.
double DevLoss(TransformerImpl& model, const DevSet& dev,
               const torch::Device& device, DataParallel* group = nullptr);

// Corpus BLEU of `model`'s translations of `dev` (greedy for `beam_size`
// 1, else beam search with `model.length_penalty`), by the same code as
// fanyi-eval (TranslateCorpus, ScoreCorpus). Rank 0 scores the translations
// that every rank sends it.
double DevBleu(const Checkpoint& model, const DevSet& dev,
               DataParallel* group = nullptr, int beam_size = 1);

// The GNMT length penalties tried on dev and the one chosen.
struct LengthPenaltyChoice {
  double length_penalty = 1.0;                      // The chosen α.
  std::vector<std::pair<double, double>> dev_bleu;  // (α, BLEU), α rising.
};

// DevBleu of `model`'s beam search of `beam_size` with each α of
// `length_penalties` (each at least 0, one at least); chooses the highest
// BLEU, ties going to the smaller α (the faster to decode). docs/quality.md
// shows that α chosen on one half of a dev set gains on the other half.
LengthPenaltyChoice ChooseLengthPenalty(Checkpoint model, const DevSet& dev,
                                        std::vector<double> length_penalties,
                                        int beam_size,
                                        DataParallel* group = nullptr);

}  // namespace fanyi

#endif  // FANYI_TRAINER_DEV_EVALUATION_H_
