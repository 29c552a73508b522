#ifndef FANYI_COMMON_DECODING_CPU_ISA_H_
#define FANYI_COMMON_DECODING_CPU_ISA_H_

#include <string>

namespace fanyi {

// The x86-64 instruction sets the CPU kernels have variants for, from the
// least to the most capable. The build itself targets baseline x86-64 (SSE2):
// each kernel compiles its AVX2 and AVX-512 variants with GCC's `target`
// attribute and picks one at run time, so one binary runs everywhere and
// uses what the machine it runs on has.
enum class CpuIsa {
  kPortable = 0,  // Plain C++ (what the compiler makes of it for SSE2).
  kAvx2 = 1,      // AVX2 and FMA.
  kAvx512 = 2,    // AVX-512 F, BW, DQ and VL.
};

// The most capable variant this CPU runs, lowered to FANYI_CPU_ISA when that
// environment variable names one ("portable", "avx2", "avx512"; to compare
// variants or to rule one out; empty is unset). Read once; another name
// throws std::invalid_argument.
CpuIsa DetectedCpuIsa();

// Whether this CPU runs `isa`'s variants.
bool CpuSupports(CpuIsa isa);

// "portable", "avx2" or "avx512".
std::string CpuIsaName(CpuIsa isa);

// The ISA named `name` as CpuIsaName writes it; throws std::invalid_argument
// for any other name.
CpuIsa ParseCpuIsa(const std::string& name);

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_CPU_ISA_H_
