#!/usr/bin/env bash
# Several models in one fanyi-server against one alone (docs/benchmarks.md,
# "Several models"):
#   bench/models.sh EN_ZH_CHECKPOINT ZH_EN_CHECKPOINT
# 1. Serves EN_ZH alone (--model_dir): resident memory after a warm-up, and
#    its throughput under CONCURRENCY closed-loop clients for DURATION s.
# 2. Serves both from a model repository: resident memory after warming
#    both; en->zh alone under the same load; then both at once, one
#    fanyi-loadgen per model side by side, CONCURRENCY clients each.
# 3. A hot reload under load: version 2 of en-zh is copied in (renamed into
#    place) while CONCURRENCY clients keep en-zh busy; prints the load time
#    the server logged, the requests answered while it loaded, and every
#    loadgen's status counts (all must be OK).
# Requests are greedy unless BEAM says otherwise. Environment: THREADS
# (server --threads, 2), CONCURRENCY (16), DURATION (20), BEAM (1),
# BUILD_DIR (build-bench), JOBS (nproc), WORK_DIR (/tmp/fanyi-models-bench).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -ne 2 ]]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
en_zh=$(realpath "$1")
zh_en=$(realpath "$2")
threads="${THREADS:-2}"
concurrency="${CONCURRENCY:-16}"
duration="${DURATION:-20}"
beam="${BEAM:-1}"
build_dir="${BUILD_DIR:-build-bench}"
work_dir="${WORK_DIR:-/tmp/fanyi-models-bench}"

# shellcheck source=scripts/bench_common.sh
source scripts/bench_common.sh
build_fanyi_targets "$build_dir" fanyi-server fanyi-loadgen

rm -rf "$work_dir"
mkdir -p "$work_dir/repository/en-zh" "$work_dir/repository/zh-en"
cp -r "$en_zh" "$work_dir/repository/en-zh/1"
cp -r "$zh_en" "$work_dir/repository/zh-en/1"
# The dev set's sides, one sentence a line.
cut -f1 ../shared/data/en-zh/dev.tsv >"$work_dir/en.txt"
cut -f2 ../shared/data/en-zh/dev.tsv >"$work_dir/zh.txt"

trap stop_fanyi_server EXIT

# NAME SOURCE_LANGUAGE TARGET_LANGUAGE INPUT FLAGS...: one loadgen run; its
# report goes to NAME.json.
loadgen() {
  local name="$1" source="$2" target="$3" input="$4"
  shift 4
  "$bin/fanyi-loadgen" --server "127.0.0.1:$port" --input "$input" \
    --source_language "$source" --target_language "$target" \
    --beam_size "$beam" --json "$work_dir/$name.json" "$@" >/dev/null
}
measure() {  # NAME SOURCE TARGET INPUT: the closed-loop load.
  loadgen "$@" --concurrency "$concurrency" --duration_s "$duration" \
    --warmup_requests 50
}
rss_mb() {
  awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$server_pid/status"
}
report() {  # NAME...: sentences/s, p50 and p99 ms, status counts.
  python3 - "$work_dir" "$@" <<'EOF'
import json, pathlib, sys
directory = pathlib.Path(sys.argv[1])
for name in sys.argv[2:]:
    report = json.loads((directory / f"{name}.json").read_text())
    latency = report["latency_ms"]
    print(f"  {name}: {report['sentences_per_second']:.1f} sentences/s, "
          f"p50 {latency['p50']:.1f} ms, p99 {latency['p99']:.1f} ms, "
          f"{report['status_counts']}")
EOF
}

echo "== one model (--model_dir), $threads threads, concurrency $concurrency, beam $beam"
start_fanyi_server "$work_dir/one.log" "$bin/fanyi-server" \
  --model_dir "$en_zh" --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 --http_listen 127.0.0.1:0 \
  --threads "$threads" --device cpu
loadgen warm-one "" "" "$work_dir/en.txt" --concurrency 8 --requests 200
echo "  resident memory after warm-up: $(rss_mb) MB"
measure one "" "" "$work_dir/en.txt"
report one
stop_fanyi_server

echo "== two models (--model_repository)"
start_fanyi_server "$work_dir/two.log" "$bin/fanyi-server" \
  --model_repository "$work_dir/repository" --repository_poll_ms 200 \
  --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 --http_listen 127.0.0.1:0 \
  --threads "$threads" --device cpu
loadgen warm-en "en" "zh" "$work_dir/en.txt" --concurrency 8 --requests 200
loadgen warm-zh "zh" "en" "$work_dir/zh.txt" --concurrency 8 --requests 200
echo "  resident memory after warming both: $(rss_mb) MB"
measure alone en zh "$work_dir/en.txt"
report alone
measure mixed-en en zh "$work_dir/en.txt" &
other=$!
measure mixed-zh zh en "$work_dir/zh.txt"
wait "$other"
report mixed-en mixed-zh

echo "== hot reload of en-zh under load"
requests_total() {
  curl -s "http://127.0.0.1:$metrics_port/metrics" |
    awk '/^fanyi_requests_total\{code="OK",method="Translate",model="en-zh"\}/ {print $2}'
}
loadgen reload en zh "$work_dir/en.txt" --concurrency "$concurrency" \
  --duration_s $((duration + 10)) &
load=$!
sleep 5
cp -r "$en_zh" "$work_dir/repository/en-zh/2.tmp"
before=$(requests_total)
mv "$work_dir/repository/en-zh/2.tmp" "$work_dir/repository/en-zh/2"
until grep -q "model en-zh version 2 serving" "$work_dir/two.log"; do
  sleep 0.05
done
after=$(requests_total)
wait "$load"
until grep -q "model en-zh version 1 unloaded" "$work_dir/two.log"; do
  sleep 0.05
done
grep "model en-zh version" "$work_dir/two.log" | sed 's/^/  log: /'
echo "  requests answered while version 2 loaded: $((after - before))" \
  "($concurrency in flight throughout)"
report reload
