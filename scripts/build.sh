#!/usr/bin/env bash
# Installs missing dependencies and builds fanyi (Release) into build/.
# BUILD_DIR, JOBS and BUILD_TARGETS may be set in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# Paths relative to the checkout in ccache keys, and the build folder's path
# left out of them (ccache hashes it for -g builds): fresh clones anywhere
# reuse the cache.
export CCACHE_BASEDIR="$PWD"
export CCACHE_NOHASHDIR=true
build_dir="${BUILD_DIR:-build}"
jobs="${JOBS:-$(nproc)}"
# Ninja for a new build folder (it starts a target's files while the
# libraries it links still build; an existing folder keeps its generator).
generator=()
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
# BUILD_TARGETS (space-separated) builds only those, as the images do.
read -r -a targets <<<"${BUILD_TARGETS:-}"
cmake --build "$build_dir" -j "$jobs" ${targets[@]:+--target "${targets[@]}"}
