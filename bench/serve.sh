#!/usr/bin/env bash
# Benchmarks fanyi-server under load with fanyi-loadgen (benchmark D):
#   bench/serve.sh MODEL_DIR [SOURCES]
# Starts fanyi-server on loopback, then runs closed-loop loads at each
# concurrency in CONCURRENCIES (REPEATS runs of DURATION seconds each, the
# median run by throughput kept), then an open-loop run at OPEN_FRACTION of
# the best closed-loop throughput, then a mixed closed loop (MIXED clients,
# half asking for greedy decoding and half for beam 4, at once), and prints a
# table (bench/serve_report.py). Requests ask for the server's default beam
# (4 unless SERVER_FLAGS sets --beam_size). SOURCES defaults to the dev set
# (a TSV; its first column is used).
# Environment: THREADS (server --threads, 2), DEVICE (server --device, cpu),
# CONCURRENCIES ("1 8 64"), DURATION (15), REPEATS (3), OPEN_FRACTION (0.5),
# MIXED (64; 0 skips it), SERVER_FLAGS (more fanyi-server flags), BUILD_DIR
# (build-bench), JOBS (nproc), BIN_DIR (prebuilt programs: build nothing),
# WORK_DIR (/tmp/fanyi-serve-bench).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
model_dir="$1"
sources="${2:-../shared/data/en-zh/dev.tsv}"
threads="${THREADS:-2}"
concurrencies="${CONCURRENCIES:-1 8 64}"
duration="${DURATION:-15}"
repeats="${REPEATS:-3}"
open_fraction="${OPEN_FRACTION:-0.5}"
mixed="${MIXED:-64}"
build_dir="${BUILD_DIR:-build-bench}"
work_dir="${WORK_DIR:-/tmp/fanyi-serve-bench}"

# shellcheck source=scripts/bench_common.sh
source scripts/bench_common.sh
build_fanyi_targets "$build_dir" fanyi-server fanyi-loadgen

rm -rf "$work_dir"
mkdir -p "$work_dir"
trap stop_fanyi_server EXIT
# shellcheck disable=SC2086  # SERVER_FLAGS is a list of flags.
start_fanyi_server "$work_dir/server.log" "$bin/fanyi-server" \
  --model_dir "$model_dir" --listen 127.0.0.1:0 \
  --metrics_listen 127.0.0.1:0 --http_listen 127.0.0.1:0 --threads "$threads" \
  --device "${DEVICE:-cpu}" ${SERVER_FLAGS:-}
echo "== fanyi-server on 127.0.0.1:$port ($threads threads, ${DEVICE:-cpu})" \
  "${SERVER_FLAGS:-}"

loadgen() {  # NAME FLAGS...
  local name="$1"
  shift
  "$bin/fanyi-loadgen" --server "127.0.0.1:$port" --input "$sources" \
    --duration_s "$duration" --warmup_requests 50 \
    --json "$work_dir/$name.json" "$@" >/dev/null
}

for concurrency in $concurrencies; do
  for run in $(seq "$repeats"); do
    echo "== closed loop, concurrency $concurrency, run $run"
    loadgen "closed-c$concurrency-$run" --concurrency "$concurrency"
  done
done
rate=$(python3 bench/serve_report.py --dir "$work_dir" --open_rate \
  --open_fraction "$open_fraction")
for run in $(seq "$repeats"); do
  echo "== open loop, $rate requests/s, run $run"
  loadgen "open-$run" --rate "$rate" --seed "$run"
done

if [[ "$mixed" -gt 0 ]]; then
  for run in $(seq "$repeats"); do
    echo "== mixed closed loop, $((mixed / 2)) greedy + $((mixed / 2)) beam 4" \
      "clients, run $run"
    loadgen "mixed-greedy-$run" --concurrency $((mixed / 2)) --beam_size 1 &
    greedy_clients=$!
    loadgen "mixed-beam-$run" --concurrency $((mixed / 2)) --beam_size 4
    wait "$greedy_clients"
  done
fi

echo "== summary ($(nproc) cores, $(uname -m))"
python3 bench/serve_report.py --dir "$work_dir"
