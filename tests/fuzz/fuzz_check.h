// The one way a fuzz target reports a broken property: print what broke and
// abort, which libFuzzer records as a crash with the input that caused it.
#ifndef FANYI_TESTS_FUZZ_FUZZ_CHECK_H_
#define FANYI_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string>

namespace fanyi::fuzzing {

// Aborts with `message` unless `condition` holds.
inline void FuzzCheck(bool condition, const std::string& message) {
  if (condition) return;
  std::fprintf(stderr, "fuzz property violated: %s\n", message.c_str());
  std::abort();
}

}  // namespace fanyi::fuzzing

#endif  // FANYI_TESTS_FUZZ_FUZZ_CHECK_H_
