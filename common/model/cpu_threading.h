#ifndef FANYI_COMMON_MODEL_CPU_THREADING_H_
#define FANYI_COMMON_MODEL_CPU_THREADING_H_

namespace fanyi {

// Makes the process run with OMP_WAIT_POLICY=PASSIVE and
// OPENBLAS_NUM_THREADS=1 unless the user set them, by re-executing itself
// once with those variables added (both are read when the libraries load,
// before main). Measured on 2 cores with Debian's LibTorch: OpenMP threads
// spinning after each parallel region starve OpenBLAS's own threads, and
// training runs 3-4× slower than with these settings. Call first in main().
void EnsureCpuThreadingEnvironment(char** argv);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CPU_THREADING_H_
