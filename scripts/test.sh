#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the whole test suite:
# installs dependencies if missing, builds, runs CTest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/build.sh
build_dir="${BUILD_DIR:-build}"
cd "$build_dir"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
