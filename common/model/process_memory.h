#ifndef FANYI_COMMON_MODEL_PROCESS_MEMORY_H_
#define FANYI_COMMON_MODEL_PROCESS_MEMORY_H_

namespace fanyi {

// Makes the process keep the memory it frees for its next allocations
// instead of handing it back to the kernel. glibc's malloc maps each block
// above a threshold (128 KiB to start, at most 32 MiB) on its own and unmaps
// it when freed, and trims the top of its heaps; every page of such a block
// then faults and is zeroed again when it is used next. Decoding allocates
// the same large blocks step after step (a step's logits, a cache moved to
// grow), so on the CPU float32 beam search ran 4-5% faster without it
// (docs/benchmarks.md). Blocks up to 32 MiB come from the heaps, and up to
// 256 MiB of free memory stays mapped. For the programs that decode; call
// early in main(), before the threads start.
void KeepFreedMemoryForReuse();

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_PROCESS_MEMORY_H_
