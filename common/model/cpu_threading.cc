#include "common/model/cpu_threading.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

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

int CoresGiven() {
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
    cores = CPU_COUNT(&allowed);
  }
  // cgroup v2: "max 100000" (no quota) or "QUOTA PERIOD" in microseconds;
  // cgroup v1: the two numbers in two files, the quota -1 for none.
  long long quota = 0, period = 0;
  std::ifstream cpu_max("/sys/fs/cgroup/cpu.max");
  std::string quota_text;
  if (cpu_max >> quota_text >> period) {
    quota = quota_text == "max" ? 0 : std::atoll(quota_text.c_str());
  } else {
    std::ifstream("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") >> quota;
    std::ifstream("/sys/fs/cgroup/cpu/cpu.cfs_period_us") >> period;
  }
  if (quota > 0 && period > 0) {
    cores = static_cast<int>(
        std::min<long long>(cores, (quota + period - 1) / period));
  }
  return std::max(cores, 1);
}

}  // namespace fanyi
