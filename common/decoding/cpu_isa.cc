#include "common/decoding/cpu_isa.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace fanyi {
namespace {

CpuIsa HardwareIsa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl")) {
    return CpuIsa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return CpuIsa::kAvx2;
  }
  return CpuIsa::kPortable;
}

}  // namespace

bool CpuSupports(CpuIsa isa) {
  static const CpuIsa hardware = HardwareIsa();
  return isa <= hardware;
}

CpuIsa DetectedCpuIsa() {
  static const CpuIsa detected = [] {
    CpuIsa isa = HardwareIsa();
    const char* asked = std::getenv("FANYI_CPU_ISA");
    if (asked != nullptr && *asked != '\0') {
      isa = std::min(isa, ParseCpuIsa(asked));
    }
    return isa;
  }();
  return detected;
}

std::string CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kPortable:
      return "portable";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

CpuIsa ParseCpuIsa(const std::string& name) {
  for (CpuIsa isa : {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (name == CpuIsaName(isa)) return isa;
  }
  throw std::invalid_argument("unknown CPU instruction set '" + name +
                              "'; use portable, avx2 or avx512");
}

}  // namespace fanyi
