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

// The cores this process is given: the CPUs its affinity mask allows
// (taskset, a cpuset), lowered to its cgroup's CPU quota when one is set
// (cgroup v2 cpu.max or v1 cpu.cfs_quota_us, as a Kubernetes CPU limit
// sets them; rounded up). At
// least 1. std::thread::hardware_concurrency counts every core of the
// machine, also those a container may not use.
int CoresGiven();

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CPU_THREADING_H_
