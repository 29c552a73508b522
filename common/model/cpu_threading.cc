#include "common/model/cpu_threading.h"

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
  // Exec the real path rather than /proc/self/exe, so that the process keeps
  // its name (ps, pgrep, top show "exe" otherwise).
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length > 0) {
    path[length] = '\0';
    execv(path, argv);
  }
  // Not fatal: the process goes on, only slower.
  std::fprintf(stderr,
               "warning: could not re-execute with threading "
               "settings: %s\n",
               std::strerror(errno));
}

}  // namespace fanyi
