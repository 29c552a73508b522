#include "common/cpu_threading.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fanyi {

void EnsureCpuThreadingEnvironment(char** argv) {
  constexpr char kMarker[] = "FANYI_CPU_THREADING_SET";
  if (std::getenv(kMarker) != nullptr) return;
  setenv(kMarker, "1", 1);
  // setenv's last argument 0 keeps a value the user chose.
  setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
  execv("/proc/self/exe", argv);
  // Not fatal: the process goes on, only slower.
  std::fprintf(stderr,
               "warning: could not re-execute with threading "
               "settings: %s\n",
               std::strerror(errno));
}

}  // namespace fanyi
