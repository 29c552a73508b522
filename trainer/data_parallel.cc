#include "trainer/data_parallel.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/tensor.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <utility>

namespace fanyi {
namespace {

// The integer in environment variable `name`, within [low, high]; `fallback`
// when it is unset.
int IntegerVariable(const char* name, int fallback, int low, int high) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < low || value > high) {
    throw std::invalid_argument(
        std::string(name) + "=" + text + " is not an integer in [" +
        std::to_string(low) + ", " + std::to_string(high) + "]");
  }
  return static_cast<int>(value);
}

}  // namespace

RendezvousEnvironment RendezvousEnvironment::FromEnvironment() {
  RendezvousEnvironment environment;
  environment.world_size = IntegerVariable("WORLD_SIZE", 1, 1, 1 << 16);
  environment.rank = IntegerVariable("RANK", 0, 0, environment.world_size - 1);
  environment.master_port = IntegerVariable("MASTER_PORT", 29500, 1, 65535);
  const char* address = std::getenv("MASTER_ADDR");
  if (address != nullptr && *address != '\0') {
    environment.master_address = address;
  } else if (environment.world_size > 1) {
    throw std::invalid_argument("MASTER_ADDR is not set, and WORLD_SIZE is " +
                                std::to_string(environment.world_size));
  }
  return environment;
}

struct DataParallel::Group {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
};

DataParallel::DataParallel(const RendezvousEnvironment& environment,
                           std::chrono::milliseconds timeout)
    : rank_(environment.rank),
      world_size_(environment.world_size),
      group_(std::make_unique<Group>()) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<std::uint16_t>(environment.master_port);
  store_options.isServer = environment.rank == 0;
  store_options.numWorkers = environment.world_size;
  store_options.timeout = timeout;
  try {
    group_->store = c10::make_intrusive<c10d::TCPStore>(
        environment.master_address, store_options);
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // Ranks on one machine meet on the loopback; across machines each rank
    // listens on the address its host name resolves to (a pod's IP).
    const bool local = environment.master_address == "127.0.0.1" ||
                       environment.master_address == "localhost";
    options->devices.push_back(
        local ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
              : c10d::ProcessGroupGloo::createDefaultDevice());
    options->threads = 1;
    group_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(
        group_->store, environment.rank, environment.world_size, options);
  } catch (const std::exception& error) {
    throw std::runtime_error(
        "rank " + std::to_string(environment.rank) + " of " +
        std::to_string(environment.world_size) +
        " could not join the group at " + environment.master_address + ":" +
        std::to_string(environment.master_port) + ": " + error.what());
  }
}

DataParallel::~DataParallel() = default;

void DataParallel::SumInPlace(const std::vector<torch::Tensor>& tensors,
                              int64_t bucket_bytes) {
  for (const torch::Tensor& tensor : tensors) {
    if (!tensor.defined() || !tensor.device().is_cpu() ||
        tensor.scalar_type() != at::kFloat || !tensor.is_contiguous()) {
      throw std::invalid_argument(
          "DataParallel::SumInPlace takes contiguous float32 CPU tensors");
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
      group_->gloo->allreduce(bucket)->wait();
    } catch (const std::exception& error) {
      throw std::runtime_error("rank " + std::to_string(rank_) +
                               ": summing gradients across ranks failed "
                               "(a rank stopped?): " +
                               error.what());
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

double DataParallel::Sum(double value) {
  if (world_size_ == 1) return value;
  std::vector<torch::Tensor> one = {at::tensor({value}, at::kDouble)};
  try {
    group_->gloo->allreduce(one)->wait();
  } catch (const std::exception& error) {
    throw std::runtime_error("rank " + std::to_string(rank_) +
                             ": summing across ranks failed (a rank "
                             "stopped?): " +
                             error.what());
  }
  return one[0].item<double>();
}

}  // namespace fanyi
