// Data-parallel training on one machine from one command.
#ifndef FANYI_TRAINER_LOCAL_RANKS_H_
#define FANYI_TRAINER_LOCAL_RANKS_H_

#include <string>
#include <vector>

namespace fanyi {

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
