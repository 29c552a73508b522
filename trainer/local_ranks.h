// Data-parallel training on one machine from one command.
#ifndef FANYI_TRAINER_LOCAL_RANKS_H_
#define FANYI_TRAINER_LOCAL_RANKS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace fanyi {

// How one fanyi-train command uses this machine: `ranks` processes of
// `threads` threads each, each training `batch_tokens` tokens a batch, so
// that a step (one batch of each rank) holds the --batch_tokens asked for.
struct LocalRankPlan {
  int ranks = 1;
  int threads = 1;
  int64_t batch_tokens = 0;
};

// The plan for --ranks `ranks`, --threads `threads` (0: the cores this
// process is given) and --batch_tokens `batch_tokens` on --device `device`.
// `ranks` 0 means one rank per core on the CPU, and one process when the
// device is CUDA ("cuda", or "auto" with a GPU there): measured on 2 cores,
// two ranks of one thread train 1.9× the tokens/s of one process of two
// threads, whose intra-op threads leave a core idle. Throws
// std::invalid_argument for ranks on CUDA, or for fewer than one token a
// rank.
LocalRankPlan PlanLocalRanks(int ranks, int threads, int64_t batch_tokens,
                             const std::string& device);

// Runs a data-parallel training of `ranks` processes on this machine, as
// torchrun --nproc_per_node does: each rank is this program again with
// `arguments` (argv without argv[0]) and `rank_arguments` after them, and
// RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1 and a free MASTER_PORT in its
// environment. Rank 0 writes to this process's stdout and stderr; the
// others' output is kept and shown when a rank fails. SIGTERM and SIGINT
// are passed on to every rank. Returns main's exit status: 0 when every
// rank succeeded; otherwise non-zero (128 + the signal when one stopped
// the run), after stopping the other ranks, with the message of the first
// rank that failed on stderr. Throws std::runtime_error when a rank cannot
// be started.
int RunLocalRanks(int ranks, const std::vector<std::string>& arguments,
                  const std::vector<std::string>& rank_arguments);

}  // namespace fanyi

#endif  // FANYI_TRAINER_LOCAL_RANKS_H_
