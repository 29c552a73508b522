#ifndef FANYI_COMMON_DECODING_CPU_ISA_H_
#define FANYI_COMMON_DECODING_CPU_ISA_H_

#include <string>

// Marks a function whose loops GCC compiles once per instruction set; the
// loader picks the variant the CPU runs (an ifunc), so the build stays
// baseline x86-64 while those loops use AVX2 or AVX-512 where the machine
// has them. For plain loops the compiler vectorizes; the product kernels
// pick their hand-written variants with DetectedCpuIsa instead.
// Not under ThreadSanitizer: the loader runs an ifunc's resolver before the
// sanitizer's runtime is up, and the process dies at start.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_THREAD__)
#define FANYI_CPU_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FANYI_CPU_CLONES
#endif

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
