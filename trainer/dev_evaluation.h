// How training measures a model on its dev set: the loss and the BLEU that
// choose best/ and show progress.
#ifndef FANYI_TRAINER_DEV_EVALUATION_H_
#define FANYI_TRAINER_DEV_EVALUATION_H_

#include <torch/torch.h>

#include "common/model/checkpoint.h"
#include "common/model/transformer.h"
#include "trainer/prepared_corpus.h"

namespace fanyi {

// Mean loss per target token of `model` (in eval mode) on `dev`, without
// label smoothing or autograd, in batches of similar lengths on `device`.
double DevLoss(TransformerImpl& model, const DevSet& dev,
               const torch::Device& device);

// Corpus BLEU of `model`'s greedy translations of `dev`, by the same code as
// fanyi-eval (TranslateCorpus, ScoreCorpus).
double DevBleu(const Checkpoint& model, const DevSet& dev);

}  // namespace fanyi

#endif  // FANYI_TRAINER_DEV_EVALUATION_H_
