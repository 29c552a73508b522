// Expat's memory within a budget: a document that would make Expat hold
// more than its budget stops with XML_ERROR_NO_MEMORY instead of growing the
// process (xml_tree.h, translation_memory.h).
#ifndef FANYI_COMMON_FORMATS_EXPAT_MEMORY_H_
#define FANYI_COMMON_FORMATS_EXPAT_MEMORY_H_

#include <expat.h>

#include <cstddef>

namespace fanyi {

// What the parses of one document may still take.
struct ExpatMemory {
  std::size_t left = 0;
  bool exhausted = false;  // A request was refused.
};

// Allocation functions for XML_ParserCreate_MM that draw on the budget of
// the ExpatMemoryScope alive on the calling thread (Expat's allocation
// functions take no context, hence a thread-local budget). Every call on a
// parser made with them, XML_ParserFree included, must run in a scope of
// the same budget.
extern const XML_Memory_Handling_Suite kBudgetedExpatMemory;

// Makes `memory` the budget of Expat's calls on this thread while alive.
class ExpatMemoryScope {
 public:
  explicit ExpatMemoryScope(ExpatMemory* memory);
  ~ExpatMemoryScope();
  ExpatMemoryScope(const ExpatMemoryScope&) = delete;
  ExpatMemoryScope& operator=(const ExpatMemoryScope&) = delete;

 private:
  ExpatMemory* const outer_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_EXPAT_MEMORY_H_
