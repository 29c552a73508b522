#include "common/formats/expat_memory.h"

#include <cstdlib>
#include <cstring>

namespace fanyi {
namespace {

// Expat's memory for the parse running on this thread, within a budget:
// its allocation functions take no context, hence thread_local. A request
// past the budget gets NULL, which Expat reports as XML_ERROR_NO_MEMORY.
thread_local ExpatMemory* expat_memory = nullptr;

// Each block starts with its size (16 bytes keep malloc's alignment).
constexpr std::size_t kHeader = 16;

void* ExpatMalloc(std::size_t size) {
  ExpatMemory& memory = *expat_memory;
  if (size > memory.left || kHeader > memory.left - size) {
    memory.exhausted = true;
    return nullptr;
  }
  char* block = static_cast<char*>(std::malloc(kHeader + size));
  if (block == nullptr) return nullptr;
  std::memcpy(block, &size, sizeof size);
  memory.left -= kHeader + size;
  return block + kHeader;
}

void ExpatFree(void* pointer) {
  if (pointer == nullptr) return;
  char* block = static_cast<char*>(pointer) - kHeader;
  std::size_t size = 0;
  std::memcpy(&size, block, sizeof size);
  expat_memory->left += kHeader + size;
  std::free(block);
}

void* ExpatRealloc(void* pointer, std::size_t size) {
  if (pointer == nullptr) return ExpatMalloc(size);
  ExpatMemory& memory = *expat_memory;
  char* block = static_cast<char*>(pointer) - kHeader;
  std::size_t old_size = 0;
  std::memcpy(&old_size, block, sizeof old_size);
  if (size > old_size && size - old_size > memory.left) {
    memory.exhausted = true;
    return nullptr;
  }
  char* grown = static_cast<char*>(std::realloc(block, kHeader + size));
  if (grown == nullptr) return nullptr;
  std::memcpy(grown, &size, sizeof size);
  memory.left = memory.left + old_size - size;
  return grown + kHeader;
}

}  // namespace

const XML_Memory_Handling_Suite kBudgetedExpatMemory = {
    ExpatMalloc, ExpatRealloc, ExpatFree};

ExpatMemoryScope::ExpatMemoryScope(ExpatMemory* memory) : outer_(expat_memory) {
  expat_memory = memory;
}

ExpatMemoryScope::~ExpatMemoryScope() { expat_memory = outer_; }

}  // namespace fanyi
