// Gumbo's memory for one parse (html_reader.h), within a budget of memory
// and of CPU time.
#ifndef FANYI_COMMON_FORMATS_GUMBO_MEMORY_H_
#define FANYI_COMMON_FORMATS_GUMBO_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace fanyi {

// Gumbo's memory for one parse. Every block it holds is freed here, at the
// end, in one loop: gumbo_destroy_output would free the tree recursively,
// a call per level, which a deep enough document makes overflow the stack.
// A parse that would hold more than its memory budget, or run past its CPU
// time budget (checked every kCheckEvery allocations: every tag allocates),
// is stopped by an exception thrown from Allocate, through Gumbo's C frames
// (built with unwind tables, as Debian builds every library); what Gumbo
// held then is freed here like the rest.
class GumboMemory {
 public:
  // What each block is charged beyond its size: malloc's header and its
  // entry in the table of blocks held.
  static constexpr std::size_t kBlockOverhead = 64;

  // Holds at most `budget` bytes, for at most `seconds` of this thread's
  // CPU time from now.
  GumboMemory(std::size_t budget, double seconds);
  GumboMemory(const GumboMemory&) = delete;
  GumboMemory& operator=(const GumboMemory&) = delete;
  ~GumboMemory();

  // GumboOptions::allocator and deallocator, with `self` as userdata.
  static void* Allocate(void* self, std::size_t size);
  static void Deallocate(void* self, void* block);

 private:
  static constexpr int kCheckEvery = 64;

  void* Take(std::size_t size);
  void Give(void* block);

  const std::size_t budget_;
  const double seconds_;
  const double deadline_;  // In ThreadCpuSeconds().
  std::size_t held_ = 0;
  std::uint64_t allocations_ = 0;
  std::unordered_map<void*, std::size_t> blocks_;  // Held: block -> charged.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_GUMBO_MEMORY_H_
