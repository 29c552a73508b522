#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang (ASan + UBSan) into
# build-fuzz/ and runs each for a bounded time:
#   scripts/fuzz.sh [seconds per target, default 60; 0 = build only] [target ...]
# Each target starts from its seed corpus in tests/fuzz/corpus/<target>/ (left
# unchanged); what it discovers goes to build-fuzz/corpus/<target>/ and
# crashing inputs to build-fuzz/artifacts/<target>/. Prints one summary line
# per target and exits non-zero if any target crashed. A crash becomes a
# regression test in a GoogleTest file plus a fix (docs/reliability.md).
# JOBS may be set in the environment; BUILD_DIR overrides the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  targets=(tokenizer_fuzzer vocabulary_fuzzer model_config_fuzzer
           request_preparation_fuzzer request_fields_fuzzer html_reader_fuzzer
           document_readers_fuzzer ctranslate2_model_fuzzer
           subword_model_fuzzer)
fi

bash scripts/install-deps.sh
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: needs clang++ (Debian: apt-get install clang libclang-rt-dev)" >&2
  exit 1
fi
export CCACHE_BASEDIR="$PWD"
build_dir="${BUILD_DIR:-build-fuzz}"
jobs="${JOBS:-$(nproc)}"
# -O1 with line tables: fast enough to fuzz, symbolized crash reports.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only -O1" \
  -DFANYI_FUZZ=ON >/dev/null
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"
if [ "$seconds" -eq 0 ]; then
  exit 0
fi

export ASAN_OPTIONS="halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan_suppressions.txt"
failed=()
for target in "${targets[@]}"; do
  binary="$(find "$build_dir/tests/fuzz" -maxdepth 1 -name "$target" -type f)"
  corpus="$build_dir/corpus/$target"
  artifacts="$build_dir/artifacts/$target"
  log="$build_dir/fuzz-$target.log"
  mkdir -p "$corpus" "$artifacts"
  # Each target gets a dictionary of what its inputs are made of; the
  # readers of requests and documents get room (-max_len) for inputs nested
  # or repeated tens of thousands of times, as attacks are.
  options=()
  case "$target" in
    vocabulary_fuzzer | model_config_fuzzer)
      options=(-dict=tests/fuzz/json.dict) ;;
    request_fields_fuzzer)
      options=(-dict=tests/fuzz/request.dict -max_len=262144) ;;
    html_reader_fuzzer)
      options=(-dict=tests/fuzz/html.dict -max_len=262144) ;;
    document_readers_fuzzer)
      options=(-dict=tests/fuzz/documents.dict -max_len=262144) ;;
  esac
  # -timeout: one input taking 10 s is a hang worth reporting; -rss_limit_mb:
  # one taking 2 GiB is a memory bomb worth reporting.
  status=0
  "$binary" "${options[@]}" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 \
    -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$corpus" "tests/fuzz/corpus/$target" \
    >"$log" 2>&1 || status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  crashes="$(find "$artifacts" -type f | wc -l)"
  echo "$target: ${seconds}s, ${runs:-?} executions," \
    "corpus $(find "$corpus" -type f | wc -l) files" \
    "(+$(find "tests/fuzz/corpus/$target" -type f | wc -l) seeds)," \
    "$crashes crashing inputs, exit $status (log: $log)"
  if [ "$status" -ne 0 ]; then
    failed+=("$target")
  fi
done

if [ "${#failed[@]}" -ne 0 ]; then
  echo "fuzz.sh: crashes in ${failed[*]}; inputs under $build_dir/artifacts/" >&2
  exit 1
fi
