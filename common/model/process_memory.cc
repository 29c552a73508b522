#include "common/model/process_memory.h"

#include <malloc.h>

namespace fanyi {

void KeepFreedMemoryForReuse() {
  // Fixed values also turn off glibc's own adjustment of both thresholds.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace fanyi
