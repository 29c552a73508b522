// Where the ranks of a data-parallel training run meet.
#ifndef FANYI_TRAINER_RENDEZVOUS_H_
#define FANYI_TRAINER_RENDEZVOUS_H_

#include <string>

namespace fanyi {

// Where a rank finds the others: the variables torchrun, the Kubeflow
// Training Operator's PyTorchJob and a Kubernetes Indexed Job set.
struct RendezvousEnvironment {
  std::string master_address = "127.0.0.1";  // MASTER_ADDR
  int master_port = 29500;                   // MASTER_PORT
  int world_size = 1;                        // WORLD_SIZE
  int rank = 0;                              // RANK

  // Reads the four variables; a run with none of them set is one process
  // (world size 1). Throws std::invalid_argument naming a variable that is
  // malformed or out of range, or missing while WORLD_SIZE is above 1.
  static RendezvousEnvironment FromEnvironment();
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_RENDEZVOUS_H_
