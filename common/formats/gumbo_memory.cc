#include "common/formats/gumbo_memory.h"

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>

namespace fanyi {
namespace {

// This thread's CPU time, in seconds.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) +
         1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace

GumboMemory::GumboMemory(std::size_t budget, double seconds)
    : budget_(budget),
      seconds_(seconds),
      deadline_(ThreadCpuSeconds() + seconds) {}

GumboMemory::~GumboMemory() {
  for (const auto& [block, size] : blocks_) std::free(block);
}

void* GumboMemory::Allocate(void* self, std::size_t size) {
  return static_cast<GumboMemory*>(self)->Take(size);
}

void GumboMemory::Deallocate(void* self, void* block) {
  static_cast<GumboMemory*>(self)->Give(block);
}

void* GumboMemory::Take(std::size_t size) {
  const std::size_t charged = size + kBlockOverhead;
  if (size > budget_ || charged > budget_ - held_) {
    throw std::invalid_argument(
        "HTML: parsing it would take more than " +
        std::to_string(budget_ >> 20) +
        " MiB (markup that multiplies elements); send simpler HTML");
  }
  if (++allocations_ % kCheckEvery == 0 && ThreadCpuSeconds() > deadline_) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", seconds_);
    throw std::invalid_argument(
        "HTML: parsing it took more than " + std::string(seconds) +
        " s of CPU time (markup the parser reads slowly, such as elements "
        "nested deep); send simpler HTML");
  }
  void* block = std::malloc(size == 0 ? 1 : size);
  if (block == nullptr) throw std::bad_alloc();
  try {
    blocks_.emplace(block, charged);
  } catch (...) {
    std::free(block);
    throw;
  }
  held_ += charged;
  return block;
}

void GumboMemory::Give(void* block) {
  const auto found = blocks_.find(block);
  if (found == blocks_.end()) return;  // free(NULL), as Gumbo may call.
  held_ -= found->second;
  std::free(block);
  blocks_.erase(found);
}

}  // namespace fanyi
