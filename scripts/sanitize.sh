#!/usr/bin/env bash
# Builds fanyi with a sanitizer and runs the tests labelled for it:
#   scripts/sanitize.sh address   AddressSanitizer + UBSan into build-asan/,
#                                 CTest label "asan" (the tests of the code
#                                 that reads outside input or manages memory
#                                 by hand; tests/CMakeLists.txt)
#   scripts/sanitize.sh thread    ThreadSanitizer into build-tsan/,
#                                 CTest label "tsan" (the batcher, the
#                                 assembly pool, the model registry)
# JOBS may be set in the environment; BUILD_DIR overrides the build folder.
# Any sanitizer report fails the test that produced it.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizer="${1:-address}"
case "$sanitizer" in
  address) label=asan ;;
  thread) label=tsan ;;
  *)
    echo "usage: $0 [address|thread]" >&2
    exit 2
    ;;
esac

bash scripts/install-deps.sh
# Paths relative to the checkout in ccache keys, and the build folder's path
# left out of them (ccache hashes it for -g builds): fresh clones anywhere
# reuse the cache.
export CCACHE_BASEDIR="$PWD"
export CCACHE_NOHASHDIR=true
build_dir="${BUILD_DIR:-build-$label}"
jobs="${JOBS:-$(nproc)}"
# -O0: the build compiles in two thirds of the time -O1 takes (server_test
# under ASan: 48 s against 75 s), and the tests' arithmetic runs in
# LibTorch, which is not rebuilt. -g1 (line tables): reports name each
# frame's file and line, at two thirds of full debug information's cost.
# clang: it compiles LibTorch's headers at -O0 in three quarters of GCC's
# time (continuous_decoder_test.cc: 39 s against 52 s), and its UBSan checks
# more (float-to-integer overflow). SANITIZE_CXX picks another compiler.
# Ninja for a new build folder, as scripts/build.sh.
generator=()
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER="${SANITIZE_CXX:-clang++}" \
  -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O0" -DFANYI_SANITIZE="$sanitizer" >/dev/null
cmake --build "$build_dir" -j "$jobs" --target "${label}_tests"

# halt_on_error: the first report ends the test binary with a failure. The
# labelled tests need no suppressions for fanyi's code: ASan, UBSan and
# LeakSanitizer report nothing in it, nor TSan in the batcher test. The one
# suppression is a leak inside libgettextpo, which a test compares with
# (tests/lsan_suppressions.txt).
export ASAN_OPTIONS="halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan_suppressions.txt"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
# Test scratch space of its own, so a concurrent run of the other test
# builds on the machine does not share the trained tiny models.
# The tests' corpus, found or downloaded as scripts/test.sh does.
FANYI_TEST_DATA=$(dirname "$(bash scripts/get-data.sh)")
export FANYI_TEST_DATA
export TEST_TMPDIR="$(cd "$build_dir" && pwd)/test-tmp"
mkdir -p "$TEST_TMPDIR"

cd "$build_dir"
ctest --output-on-failure -j "$jobs" -L "^$label\$"
