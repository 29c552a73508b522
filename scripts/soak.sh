#!/usr/bin/env bash
# Overload, soak and deadline runs against a real fanyi-server on loopback:
#   scripts/soak.sh MODEL_DIR [SOURCES]
# 1. capacity: closed loop, 64 clients, CAPACITY_S seconds -> C sentences/s.
# 2. soak: CLIENTS closed-loop clients, WARMUP_S seconds of warm-up, then
#    MINUTES one-minute runs back to back.
# 3. deadlines: open loop at 2 x C with 100 ms deadlines for 20 s.
# 4. abuse: ABUSE_S seconds of honest traffic (16 gRPC clients of
#    fanyi-loadgen and 2 HTTP clients asking for /health and a translation),
#    first alone, then beside 4 clients sending hostile HTTP bodies from
#    two other addresses (scripts/soak_abuse.py: deep HTML, JSON and .docx,
#    unclosed markup, quadratic SubRip tags, wrapping integers, hang-ups).
# 5. overload: a second server with --max_queue 16, open loop at
#    OVERLOAD_FACTOR x C for OVERLOAD_S seconds.
# The server's RSS is sampled every second. scripts/soak_check.py prints a
# table and exits non-zero when a check fails (see there). SOURCES defaults
# to the dev set. Environment: CLIENTS (256), MINUTES (3), WARMUP_S (30),
# CAPACITY_S (20), ABUSE_S (30), OVERLOAD_S (30), OVERLOAD_FACTOR (4),
# THREADS (server --threads, all cores), BUILD_DIR (build), WORK_DIR (a new
# folder from mktemp -d; its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
model_dir="$1"
sources="${2:-../shared/data/en-zh/dev.tsv}"
clients="${CLIENTS:-256}"
minutes="${MINUTES:-3}"
warmup_s="${WARMUP_S:-30}"
capacity_s="${CAPACITY_S:-20}"
abuse_s="${ABUSE_S:-30}"
overload_s="${OVERLOAD_S:-30}"
overload_factor="${OVERLOAD_FACTOR:-4}"
threads="${THREADS:-$(nproc)}"
build_dir="${BUILD_DIR:-build}"
work_dir="${WORK_DIR:-$(mktemp -d)}"
echo "== runs, RSS samples and scrapes in $work_dir"

BUILD_DIR="$build_dir" bash scripts/build.sh >/dev/null
bin="$build_dir/bin"
mkdir -p "$work_dir"

# shellcheck source=scripts/bench_common.sh
source scripts/bench_common.sh
sampler_pid=""
stop_server() {
  if [[ -n "$sampler_pid" ]]; then kill "$sampler_pid" 2>/dev/null || true; fi
  sampler_pid=""
  stop_fanyi_server
}
trap stop_server EXIT

# start_server NAME FLAGS...: starts fanyi-server (start_fanyi_server sets
# server_pid, port and metrics_port) and samples its RSS (kB, one line per
# second) into NAME.rss.
start_server() {
  local name="$1"
  shift
  start_fanyi_server "$work_dir/$name.log" "$bin/fanyi-server" \
    --model_dir "$model_dir" --listen 127.0.0.1:0 \
    --metrics_listen 127.0.0.1:0 --http_listen 127.0.0.1:0 --threads "$threads" --device cpu "$@"
  (
    while kill -0 "$server_pid" 2>/dev/null; do
      awk '/^VmRSS/ {print $2}' "/proc/$server_pid/status" 2>/dev/null || true
      sleep 1
    done
  ) >"$work_dir/$name.rss" &
  sampler_pid=$!
  rss_file="$work_dir/$name.rss"
  echo "== fanyi-server $* on 127.0.0.1:$port ($threads threads)"
}

# loadgen NAME FLAGS...: one fanyi-loadgen run, its report in NAME.json, the
# server's RSS right after it in NAME.rss_after, and which of the server's
# RSS samples were taken during the run (first and last line numbers) in
# NAME.rss_lines.
loadgen() {
  local name="$1"
  shift
  local first
  first=$(($(wc -l <"$rss_file") + 1))
  "$bin/fanyi-loadgen" --server "127.0.0.1:$port" --input "$sources" \
    --json "$work_dir/$name.json" "$@" >/dev/null
  echo "$first $(wc -l <"$rss_file")" >"$work_dir/$name.rss_lines"
  awk '/^VmRSS/ {print $2}' "/proc/$server_pid/status" >"$work_dir/$name.rss_after"
}

# metrics NAME: a scrape of /metrics into NAME.metrics.
metrics() {
  curl -fsS "http://127.0.0.1:$metrics_port/metrics" >"$work_dir/$1.metrics"
}

start_server main
echo "== capacity: closed loop, 64 clients, ${capacity_s} s"
loadgen capacity --concurrency 64 --duration_s "$capacity_s" --warmup_requests 100
capacity=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sentences_per_second"])' \
  "$work_dir/capacity.json")

echo "== soak: $clients clients, ${warmup_s} s warm-up, then $minutes x 60 s"
loadgen soak-warmup --concurrency "$clients" --duration_s "$warmup_s"
for minute in $(seq "$minutes"); do
  echo "   minute $minute"
  loadgen "soak-$minute" --concurrency "$clients" --duration_s 60
done

deadline_rate=$(python3 -c "print(round(2 * $capacity, 1))")
echo "== deadlines: open loop at $deadline_rate requests/s, 100 ms deadlines, 20 s"
metrics deadline-before
loadgen deadline --rate "$deadline_rate" --duration_s 20 --timeout_ms 100
# Rows of expired requests must stop decoding: two scrapes a second apart
# once the run is over should show no new decoding steps.
sleep 1
metrics deadline-after1
sleep 1
metrics deadline-after2

# abuse NAME ATTACKERS: ABUSE_S seconds of honest gRPC and HTTP traffic
# beside ATTACKERS clients of hostile HTTP bodies; the HTTP side's report in
# NAME-http.json.
abuse() {
  local http_port
  http_port=$(sed -n 's|.*LibreTranslate API on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' \
    "$work_dir/main.log")
  python3 scripts/soak_abuse.py --port "$http_port" --sources "$sources" \
    --seconds "$abuse_s" --attackers "$2" --json "$work_dir/$1-http.json" &
  local abuser=$!
  loadgen "$1" --concurrency 16 --duration_s "$abuse_s" ||
    { kill "$abuser"; exit 1; }
  wait "$abuser"
}
echo "== abuse: 16 gRPC and 2 HTTP honest clients, ${abuse_s} s alone," \
  "then ${abuse_s} s beside 4 hostile HTTP clients from 2 addresses"
abuse abuse-baseline 0
abuse abuse 4
stop_server

start_server overload --max_queue 16
overload_rate=$(python3 -c "print(round($overload_factor * $capacity, 1))")
echo "== overload: --max_queue 16, open loop at $overload_rate requests/s" \
  "(${overload_factor} x capacity), ${overload_s} s"
# The warm-up fills whole batches (64 clients), so that the RSS baseline has
# seen the batch shapes the overload brings: with beam 4 by default, 8
# clients filled half a worker's rows and the peak under overload was 1.56x
# that baseline, with no growth over the soak's three minutes.
loadgen overload-warmup --concurrency 64 --requests 400
loadgen overload --rate "$overload_rate" --duration_s "$overload_s" \
  --timeout_ms 10000
stop_server

python3 scripts/soak_check.py --dir "$work_dir" --minutes "$minutes"
