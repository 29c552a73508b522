#include "trainer/data_parallel.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/tensor.h>
#include <torch/cuda.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <stdexcept>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <utility>

// USE_C10D_NCCL: a CUDA LibTorch's own definition (its torch_cuda target).
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace fanyi {
namespace {

// A collective on one bucket, run to its end.
using Collective = std::function<void(std::vector<torch::Tensor>&)>;

// The allreduce (sum) and broadcast (from rank 0) of a c10d process group,
// which keep it alive: ProcessGroupGloo and ProcessGroupNCCL share these
// calls but, in LibTorch 2.x, no base class with LibTorch 1.13.
template <typename ProcessGroup>
std::pair<Collective, Collective> CollectivesOf(
    c10::intrusive_ptr<ProcessGroup> group) {
  return {[group](std::vector<torch::Tensor>& tensors) {
            group->allreduce(tensors)->wait();
          },
          [group](std::vector<torch::Tensor>& tensors) {
            group->broadcast(tensors)->wait();
          }};
}

}  // namespace

struct DataParallel::Group {
  c10::intrusive_ptr<c10d::Store> store;
  Collective sum;
  Collective broadcast;
};

DataParallel::DataParallel(const RendezvousEnvironment& environment,
                           torch::Device device,
                           std::chrono::milliseconds timeout)
    : rank_(environment.rank),
      world_size_(environment.world_size),
      device_(device),
      group_(std::make_unique<Group>()) {
  if (device.is_cuda()) {
    const int gpus = std::max(1, static_cast<int>(torch::cuda::device_count()));
    device_ = torch::Device(torch::kCUDA,
                            static_cast<c10::DeviceIndex>(rank_ % gpus));
    current_device_.emplace(device_);
  }
  // A rank that dies leaves sockets whose next write raises SIGPIPE, and its
  // default action ends this rank without a word. Ignored (as Python, and so
  // PyTorch, has it), the write fails and the collective throws, naming the
  // rank and what failed.
  std::signal(SIGPIPE, SIG_IGN);
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<std::uint16_t>(environment.master_port);
  store_options.isServer = environment.rank == 0;
  store_options.numWorkers = environment.world_size;
  store_options.timeout = timeout;
  try {
    group_->store = c10::make_intrusive<c10d::TCPStore>(
        environment.master_address, store_options);
    if (device.is_cuda()) {
#ifdef USE_C10D_NCCL
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      std::tie(group_->sum, group_->broadcast) =
          CollectivesOf(c10::make_intrusive<c10d::ProcessGroupNCCL>(
              group_->store, environment.rank, environment.world_size,
              options));
#else
      throw std::runtime_error(
          "this build's LibTorch has no NCCL: data-parallel training on "
          "CUDA needs a CUDA LibTorch (scripts/build-gpu.sh)");
#endif
    } else {
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      // Ranks on one machine meet on the loopback; across machines each
      // rank listens on the address its host name resolves to (a pod's IP).
      const bool local = environment.master_address == "127.0.0.1" ||
                         environment.master_address == "localhost";
      options->devices.push_back(
          local ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                : c10d::ProcessGroupGloo::createDefaultDevice());
      options->threads = 1;
      std::tie(group_->sum, group_->broadcast) =
          CollectivesOf(c10::make_intrusive<c10d::ProcessGroupGloo>(
              group_->store, environment.rank, environment.world_size,
              options));
    }
  } catch (const std::exception& error) {
    throw std::runtime_error(
        "rank " + std::to_string(environment.rank) + " of " +
        std::to_string(environment.world_size) + " could not join the " +
        backend() + " group at " + environment.master_address + ":" +
        std::to_string(environment.master_port) + ": " + error.what());
  }
}

DataParallel::~DataParallel() = default;

void DataParallel::SumInPlace(const std::vector<torch::Tensor>& tensors,
                              int64_t bucket_bytes) {
  InBuckets(
      tensors, bucket_bytes, "summing gradients across ranks",
      [this](std::vector<torch::Tensor>& bucket) { group_->sum(bucket); });
}

void DataParallel::SumGradients(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> gradients;
  for (const torch::Tensor& parameter : parameters) {
    if (!parameter.grad().defined()) {
      parameter.mutable_grad() = torch::zeros_like(parameter);
    }
    gradients.push_back(parameter.grad());
  }
  SumInPlace(gradients);
}

void DataParallel::CopyFromFirstRank(const std::vector<torch::Tensor>& tensors,
                                     int64_t bucket_bytes) {
  InBuckets(tensors, bucket_bytes, "copying rank 0's tensors",
            [this](std::vector<torch::Tensor>& bucket) {
              group_->broadcast(bucket);  // Root: rank 0.
            });
}

void DataParallel::InBuckets(
    const std::vector<torch::Tensor>& tensors, int64_t bucket_bytes,
    const std::string& what,
    const std::function<void(std::vector<torch::Tensor>&)>& collective) {
  for (const torch::Tensor& tensor : tensors) {
    if (!tensor.defined() || tensor.device() != device_ ||
        tensor.scalar_type() != at::kFloat || !tensor.is_contiguous()) {
      throw std::invalid_argument(
          "DataParallel takes contiguous float32 tensors on " + device_.str());
    }
  }
  if (world_size_ == 1) return;
  size_t first = 0;
  while (first < tensors.size()) {
    // [first, last): the next bucket.
    size_t last = first;
    int64_t bytes = 0;
    std::vector<torch::Tensor> flat;
    while (last < tensors.size() && (last == first || bytes < bucket_bytes)) {
      bytes += tensors[last].numel() * 4;
      flat.push_back(tensors[last].view(-1));
      ++last;
    }
    std::vector<torch::Tensor> bucket = {at::cat(flat)};  // [bucket numel]
    try {
      collective(bucket);
    } catch (const std::exception& error) {
      throw std::runtime_error("rank " + std::to_string(rank_) + ": " + what +
                               " failed (a rank stopped?): " + error.what());
    }
    int64_t offset = 0;
    for (size_t i = first; i < last; ++i) {
      const int64_t n = tensors[i].numel();
      tensors[i].view(-1).copy_(bucket[0].narrow(0, offset, n));
      offset += n;
    }
    first = last;
  }
}

std::string DataParallel::ShareFromFirstRank(const std::string& key,
                                             const std::string& bytes) {
  if (world_size_ == 1) return bytes;
  const std::string store_key = "fanyi/" + key;
  try {
    if (rank_ == 0) {
      group_->store->set(store_key,
                         std::vector<uint8_t>(bytes.begin(), bytes.end()));
      return bytes;
    }
    const std::vector<uint8_t> shared = group_->store->get(store_key);
    return std::string(shared.begin(), shared.end());
  } catch (const std::exception& error) {
    throw std::runtime_error("rank " + std::to_string(rank_) + ": sharing " +
                             key +
                             " failed (a rank stopped?): " + error.what());
  }
}

std::vector<std::string> DataParallel::GatherOnFirstRank(
    const std::string& bytes) {
  if (world_size_ == 1) return {bytes};
  const std::string prefix = "fanyi/gather/" + std::to_string(gathers_++) + "/";
  try {
    if (rank_ != 0) {
      group_->store->set(prefix + std::to_string(rank_),
                         std::vector<uint8_t>(bytes.begin(), bytes.end()));
    }
  } catch (const std::exception& error) {
    throw std::runtime_error("rank " + std::to_string(rank_) +
                             ": sending to rank 0 failed (a rank "
                             "stopped?): " +
                             error.what());
  }
  // A collective: once it returns, every rank's bytes are in the store, and
  // a rank that died fails it within seconds, where waiting on the store
  // for its bytes would take the whole timeout.
  Sum(0.0);
  if (rank_ != 0) return {};
  try {
    std::vector<std::string> gathered = {bytes};
    for (int rank = 1; rank < world_size_; ++rank) {
      const std::string key = prefix + std::to_string(rank);
      const std::vector<uint8_t> theirs = group_->store->get(key);
      group_->store->deleteKey(key);  // The store would keep every call's.
      gathered.emplace_back(theirs.begin(), theirs.end());
    }
    return gathered;
  } catch (const std::exception& error) {
    throw std::runtime_error("rank " + std::to_string(rank_) +
                             ": gathering on rank 0 failed (a rank "
                             "stopped?): " +
                             error.what());
  }
}

double DataParallel::Sum(double value) {
  if (world_size_ == 1) return value;
  std::vector<torch::Tensor> one = {
      at::tensor({value}, at::TensorOptions(at::kDouble).device(device_))};
  try {
    group_->sum(one);
  } catch (const std::exception& error) {
    throw std::runtime_error("rank " + std::to_string(rank_) +
                             ": summing across ranks failed (a rank "
                             "stopped?): " +
                             error.what());
  }
  return one[0].item<double>();
}

}  // namespace fanyi
