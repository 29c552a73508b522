#!/usr/bin/env bash
# The translation cache (--cache_bytes) under Mastodon-style traffic, where
# popular posts are asked for again and again:
#   bench/cache_zipf.sh MODEL_DIR [SOURCES]
# Builds DISTINCT HTML posts (a mention, a dev sentence, a hashtag and a
# link, as Mastodon sends them) and a sequence of REQUESTS of them drawn
# from a Zipf law of exponent ZIPF_S (seeded: the same mix every run), which
# fanyi-loadgen sends once, in order, over HTTP (POST /translate, format
# html) at CONCURRENCY. Each run starts a fresh server (the cache starts
# empty), without the cache and with CACHE_BYTES, alternating,
# REPEATS of each: medians of requests/s, p50 and p99, and with the cache
# its hit rate and bytes, and the server's resident memory at the end.
# Environment: DISTINCT (2000: the whole dev set), REQUESTS (20000),
# ZIPF_S (1.1), CONCURRENCY (16), REPEATS (3), CACHE_BYTES (67108864),
# THREADS (server --threads, 2), BUILD_DIR (build-bench; BIN_DIR: programs
# already built), WORK_DIR (/tmp/fanyi-cache-zipf).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
model_dir="$1"
sources="${2:-../shared/data/en-zh/dev.tsv}"
distinct="${DISTINCT:-2000}"
requests="${REQUESTS:-20000}"
zipf_s="${ZIPF_S:-1.1}"
concurrency="${CONCURRENCY:-16}"
repeats="${REPEATS:-3}"
cache_bytes="${CACHE_BYTES:-67108864}"
threads="${THREADS:-2}"
build_dir="${BUILD_DIR:-build-bench}"
work_dir="${WORK_DIR:-/tmp/fanyi-cache-zipf}"

# shellcheck source=scripts/bench_common.sh
source scripts/bench_common.sh
build_fanyi_targets "$build_dir" fanyi-server fanyi-loadgen

rm -rf "$work_dir"
mkdir -p "$work_dir"
head -n "$distinct" "$sources" | cut -f1 |
  awk '{ print "<p><span class=\"h-card\" translate=\"no\"><a href=\"https://social.example/@ann\" class=\"u-url mention\">@<span>ann</span></a></span> " \
    $0 " <a href=\"https://social.example/tags/news\" class=\"mention hashtag\" rel=\"tag\">#<span>news</span></a></p>" }' \
    >"$work_dir/posts.html"
python3 - "$work_dir/posts.html" "$requests" "$zipf_s" >"$work_dir/mix.html" <<'PY'
import random, sys
posts = open(sys.argv[1], encoding="utf-8").read().splitlines()
count, s = int(sys.argv[2]), float(sys.argv[3])
weights = [1 / (rank + 1) ** s for rank in range(len(posts))]
for post in random.Random(1).choices(posts, weights, k=count):
    print(post)
PY
echo "== $(sort -u "$work_dir/mix.html" | wc -l) distinct posts in $requests requests"

trap stop_fanyi_server EXIT
run() {  # NAME CACHE_BYTES
  local name="$1" bytes="$2"
  start_fanyi_server "$work_dir/$name.log" "$bin/fanyi-server" \
    --model_dir "$model_dir" --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 \
    --http_listen 127.0.0.1:0 --threads "$threads" --device cpu \
    --max_queue 4096 --cache_bytes "$bytes"
  local http_port
  http_port=$(sed -n 's|.*LibreTranslate API on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' \
    "$work_dir/$name.log")
  "$bin/fanyi-loadgen" --server "127.0.0.1:$http_port" --http --format html \
    --input "$work_dir/mix.html" --concurrency "$concurrency" \
    --requests "$requests" --timeout_ms 60000 \
    --source_language en --target_language zh \
    --json "$work_dir/$name.json" >/dev/null
  curl -s "http://127.0.0.1:$metrics_port/metrics" | grep '^fanyi_cache' \
    >"$work_dir/$name.metrics" || true
  grep VmRSS "/proc/$server_pid/status" | awk '{print $2}' >"$work_dir/$name.rss"
  stop_fanyi_server
}
for repeat in $(seq "$repeats"); do
  echo "== run $repeat: without the cache, then with it"
  run "off-$repeat" 0
  run "on-$repeat" "$cache_bytes"
done

echo "== summary ($(nproc) cores; $(lscpu | sed -n 's/^Model name: *//p'))"
python3 - "$work_dir" "$repeats" <<'PY'
import json, statistics, sys
work, repeats = sys.argv[1], int(sys.argv[2])
def median(mode, *path):
    values = []
    for r in range(1, repeats + 1):
        value = json.load(open(f"{work}/{mode}-{r}.json"))
        for key in path:
            value = value[key]
        values.append(value)
    return statistics.median(values)
def metric(mode, name):
    values = []
    for r in range(1, repeats + 1):
        for line in open(f"{work}/{mode}-{r}.metrics"):
            if line.startswith(name + " "):
                values.append(float(line.split()[1]))
    return statistics.median(values) if values else 0
def rss(mode):
    return statistics.median(int(open(f"{work}/{mode}-{r}.rss").read()) / 1024
                             for r in range(1, repeats + 1))
print("| cache | requests/s | p50 ms | p99 ms | hit rate | cache MiB | server RSS MiB |")
print("|---|---|---|---|---|---|---|")
for mode in ("off", "on"):
    hits, misses = metric(mode, "fanyi_cache_hits_total"), metric(mode, "fanyi_cache_misses_total")
    rate = f"{hits / (hits + misses):.1%}" if hits + misses else "—"
    size = f"{metric(mode, 'fanyi_cache_bytes') / 2**20:.1f}" if mode == "on" else "—"
    print(f"| {mode} | {median(mode, 'requests_per_second'):.1f} | "
          f"{median(mode, 'latency_ms', 'p50'):.1f} | "
          f"{median(mode, 'latency_ms', 'p99'):.1f} | {rate} | {size} | {rss(mode):.0f} |")
    failed = median(mode, "requests_completed") - median(mode, "ok_requests")
    if failed:
        print(f"  ({mode}: {failed:.0f} requests failed in the median run)")
PY
