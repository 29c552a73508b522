// How training measures a model on its dev set: the loss and the BLEU that
// choose best/ and show progress.
#ifndef FANYI_TRAINER_DEV_EVALUATION_H_
#define FANYI_TRAINER_DEV_EVALUATION_H_

#include <torch/torch.h>

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

// Corpus BLEU of `model`'s greedy translations of `dev`, by the same code as
// fanyi-eval (TranslateCorpus, ScoreCorpus). Rank 0 scores the translations
// that every rank sends it.
double DevBleu(const Checkpoint& model, const DevSet& dev,
               DataParallel* group = nullptr);

}  // namespace fanyi

#endif  // FANYI_TRAINER_DEV_EVALUATION_H_
