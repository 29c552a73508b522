#ifndef FANYI_TRAINER_TRAINING_OPTIONS_H_
#define FANYI_TRAINER_TRAINING_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/model/model_config.h"
#include "trainer/corpus_preparation.h"
#include "trainer/rendezvous.h"

namespace fanyi {

// The beam of the search that chooses best/'s length penalty: the server's
// default beam.
inline constexpr int kLengthPenaltyBeam = 4;

// Settings of one training run, validated by Trainer's constructor.
struct TrainingOptions {
  // The corpus, as raw text (prepared into out_dir/data/ first) ...
  PreparationOptions corpus;  // Its max_tokens and threads are the run's:
                              // model.max_positions - 1 and `threads`.
  // ... or as a directory that fanyi-prepare wrote (then corpus.train_path
  // and corpus.dev_path stay empty, and the corpus's settings apply).
  std::string data_dir;
  std::string out_dir;          // Gets best/, last/ and train_log.jsonl.
  ModelConfig model;            // Vocabulary sizes are filled in.
  int64_t epochs = 100;         // Upper bound on passes over the data.
  int64_t max_steps = 0;        // Upper bound on optimizer steps; 0 = none.
  double max_minutes = 0;       // Wall-clock budget; 0 = no budget.
  int64_t batch_tokens = 2048;  // Rows × longest side per batch.
  // Pairs whose batches are made and shuffled together: the shards are
  // read in a shuffled order, this many pairs at a time
  // (trainer/training_batches.h). Memory grows with it.
  int64_t shuffle_window = 1000000;
  // Batches whose gradients are summed into one optimizer step, per rank:
  // a step takes accumulate_batches × world size batches in all.
  int64_t accumulate_batches = 1;
  // The ranks of a data-parallel run (trainer/data_parallel.h); world size
  // 1 trains in this process alone. Every rank validates its share of the
  // dev set; rank 0 writes the checkpoints.
  RendezvousEnvironment rendezvous;
  // How long a rank waits for the others in a collective (or to join)
  // before it fails: a rank that died makes the rest exit, never hang.
  double collective_timeout_minutes = 30;
  int64_t warmup_steps = 800;    // Linear warm-up of the learning rate.
  double lr_factor = 2.0;        // Scales the paper's schedule.
  double label_smoothing = 0.1;  // Mass spread over the other tokens.
  // Share of the words of each training batch, sources and target inputs,
  // replaced by <unk> (word dropout, Sennrich and Zhang, 2019); 0 = off.
  double word_dropout = 0;
  // R-Drop (Liang et al., 2021): each batch goes through the model twice,
  // with different dropout, and the loss adds this weight times the
  // symmetric KL divergence of the two predictions (the paper's alpha);
  // 0 = off. A step then costs about twice the compute.
  double rdrop_weight = 0;
  int64_t validate_every_epochs = 1;  // Dev loss/BLEU and saves every N.
  // Also every N optimizer steps (an epoch of a large corpus takes hours);
  // 0 = at epoch ends only.
  int64_t validate_every_steps = 0;
  int64_t average_last = 5;  // Keep the last N saves in epochs/ and, when
                             // training ends, write their average to
                             // averaged/ (best/ too if it scores higher on
                             // dev); 0 or 1 = off. docs/quality.md.
  // GNMT length penalties α tried when training ends: best/'s weights
  // translate dev with beam search of kLengthPenaltyBeam, as the server
  // decodes them, and best/ keeps the α of the highest BLEU
  // (ChooseLengthPenalty). Empty: best/ keeps 1.0.
  std::vector<double> length_penalties = {0.6, 0.8, 1.0, 1.2,
                                          1.4, 1.6, 1.8, 2.0};
  int threads = 0;              // Intra-op threads; 0 = all cores.
  std::string device = "auto";  // auto, cpu or cuda.
  // fp32, or bf16: the forward pass under bfloat16 autocast (mixed
  // precision; the weights, optimizer and validation stay float32).
  std::string precision = "fp32";
  uint64_t seed = 1;  // Seeds weights, dropout and batching.
  // A checkpoint (or training output directory) whose weights start a new
  // run, and whose shape (layers, d_model, d_ff, heads, positions, tying)
  // the run's model takes: fine-tuning, or the second stage of
  // bidirectional training. Embedding rows go over token by token
  // (trainer/weight_transfer.h), so its vocabularies may differ from the
  // corpus's; a model with subword models (an imported Argos package, say)
  // keeps its vocabularies and subword models instead. Empty: random
  // weights. A resumed run continues its own.
  std::string init_from;
  // Continue the run in out_dir from its last/, mid-epoch if it stopped
  // there; starts one when out_dir holds none. Without it, an out_dir
  // holding a run is refused.
  bool resume = false;
  bool show_progress = true;  // Progress line on a terminal.

  // Throws std::invalid_argument naming the first bad field.
  void Validate() const;
};

// The paper's learning rate: factor · d_model^-0.5 ·
// min(step^-0.5, step · warmup^-1.5), for step >= 1.
double NoamLearningRate(int64_t step, int64_t d_model, int64_t warmup_steps,
                        double factor);

}  // namespace fanyi

#endif  // FANYI_TRAINER_TRAINING_OPTIONS_H_
