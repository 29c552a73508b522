// Data-parallel training over LibTorch's own c10d process groups.
#ifndef FANYI_TRAINER_DATA_PARALLEL_H_
#define FANYI_TRAINER_DATA_PARALLEL_H_

#include <c10/core/DeviceGuard.h>
#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainer/rendezvous.h"

namespace fanyi {

// One rank of a group of processes that train one model together: each
// takes its share of the batches, and after backward the gradients are
// summed across the group so that every rank takes the same optimizer step.
// On the CPU the group is LibTorch's ProcessGroupGloo, on CUDA its
// ProcessGroupNCCL (in builds against a CUDA LibTorch); rank 0 hosts the
// TCPStore the others meet at. Every collective fails with an exception
// after `timeout` when a rank is gone, rather than waiting for it forever.
class DataParallel {
 public:
  // Joins the group of ranks whose tensors live on `device`'s type; blocks
  // until every rank has (or throws std::runtime_error after `timeout`).
  // On CUDA each rank takes a GPU of its own, in turn (RANK mod the GPUs
  // visible: NCCL wants one rank a GPU), and makes it the current device
  // while the group lives, for tensors made without an index.
  DataParallel(const RendezvousEnvironment& environment, torch::Device device,
               std::chrono::milliseconds timeout);
  ~DataParallel();

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  // "gloo" or "nccl".
  const char* backend() const { return device_.is_cuda() ? "nccl" : "gloo"; }
  // Where this rank's tensors live: the CPU, or its own GPU.
  torch::Device device() const { return device_; }

  // Sums `tensors` (float32, contiguous, on the group's device) element-wise
  // across the ranks, in place: flattened into buckets of about
  // `bucket_bytes`, one collective per bucket rather than one per tensor.
  void SumInPlace(const std::vector<torch::Tensor>& tensors,
                  int64_t bucket_bytes = int64_t{25} << 20);

  // Sums the gradients of `parameters` across the ranks, in place (as
  // SumInPlace). A parameter without a gradient (a rank with no batch in
  // the last step of an epoch) adds zeros.
  void SumGradients(const std::vector<torch::Tensor>& parameters);

  // Overwrites `tensors` (as SumInPlace takes them) with rank 0's, in
  // buckets: the same starting weights everywhere.
  void CopyFromFirstRank(const std::vector<torch::Tensor>& tensors,
                         int64_t bucket_bytes = int64_t{25} << 20);

  // The sum of `value` over the ranks.
  double Sum(double value);

  // Every rank's `bytes`, in rank order, on rank 0 (through the rendezvous
  // store); the other ranks pass theirs and get an empty vector. A
  // collective (it fails like Sum when a rank is gone): every rank calls it
  // the same number of times, and the calls are numbered.
  std::vector<std::string> GatherOnFirstRank(const std::string& bytes);

  // Rank 0's `bytes` under `key`, on every rank: rank 0 passes them, the
  // others wait for them (through the rendezvous store) and get them.
  std::string ShareFromFirstRank(const std::string& key,
                                 const std::string& bytes);

 private:
  // Runs `collective` on `tensors` flattened into buckets and copies each
  // bucket's result back; `what` names the work in errors.
  void InBuckets(
      const std::vector<torch::Tensor>& tensors, int64_t bucket_bytes,
      const std::string& what,
      const std::function<void(std::vector<torch::Tensor>&)>& collective);

  struct Group;  // The store and the process group (c10d types).

  int rank_ = 0;
  int world_size_ = 1;
  torch::Device device_;
  std::optional<c10::DeviceGuard> current_device_;
  std::unique_ptr<Group> group_;
  int64_t gathers_ = 0;  // GatherOnFirstRank calls so far.
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_DATA_PARALLEL_H_
