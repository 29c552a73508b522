#!/usr/bin/env bash
# Benchmarks the HTTP API against gRPC on one fanyi-server, with the same
# client (fanyi-loadgen, --http for HTTP):
#   bench/serve_http.sh MODEL_DIR [SOURCES]
# 1. Closed loops at each concurrency in CONCURRENCIES, gRPC and HTTP runs
#    alternating, REPEATS of each, DURATION seconds each: medians of
#    requests/s, p50 and p99, and HTTP's throughput as a share of gRPC's.
# 2. Mastodon-style HTML posts (a mention, the sentence, a hashtag and a
#    link) against the same posts as plain text, over gRPC at
#    HTML_CONCURRENCY, alternating: what format=html costs.
# SOURCES defaults to the dev set's first 500 sentences. Environment:
# THREADS (server --threads, 2), CONCURRENCIES ("1 8 64"), DURATION (15),
# REPEATS (3), HTML_CONCURRENCY (64), SERVER_FLAGS, BUILD_DIR (build-bench),
# JOBS (nproc), WORK_DIR (/tmp/fanyi-serve-http).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
model_dir="$1"
sources="${2:-../shared/data/en-zh/dev.tsv}"
threads="${THREADS:-2}"
concurrencies="${CONCURRENCIES:-1 8 64}"
duration="${DURATION:-15}"
repeats="${REPEATS:-3}"
html_concurrency="${HTML_CONCURRENCY:-64}"
build_dir="${BUILD_DIR:-build-bench}"
work_dir="${WORK_DIR:-/tmp/fanyi-serve-http}"

# shellcheck source=scripts/bench_common.sh
source scripts/bench_common.sh
build_fanyi_targets "$build_dir" fanyi-server fanyi-loadgen

rm -rf "$work_dir"
mkdir -p "$work_dir"
head -n 500 "$sources" | cut -f1 >"$work_dir/sentences.txt"
# The same words as posts: plain, and as Mastodon writes them.
awk '{
  print "@ann " $0 " #news https://example.org/a/" NR > "'"$work_dir"'/posts.txt"
  print "<p><span class=\"h-card\" translate=\"no\"><a href=\"https://social.example/@ann\" class=\"u-url mention\">@<span>ann</span></a></span> " \
    $0 " <a href=\"https://social.example/tags/news\" class=\"mention hashtag\" rel=\"tag\">#<span>news</span></a><br>" \
    "<a href=\"https://example.org/a/" NR "\" rel=\"nofollow noopener noreferrer\" target=\"_blank\"><span class=\"invisible\">https://</span><span class=\"\">example.org/a/" NR "</span></a></p>" \
    > "'"$work_dir"'/posts.html"
}' "$work_dir/sentences.txt"

trap stop_fanyi_server EXIT
# shellcheck disable=SC2086  # SERVER_FLAGS is a list of flags.
start_fanyi_server "$work_dir/server.log" "$bin/fanyi-server" \
  --model_dir "$model_dir" --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 \
  --http_listen 127.0.0.1:0 --threads "$threads" --device cpu \
  --max_queue 4096 ${SERVER_FLAGS:-}
http_port=$(sed -n 's|.*LibreTranslate API on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' \
  "$work_dir/server.log")
echo "== fanyi-server: gRPC 127.0.0.1:$port, HTTP 127.0.0.1:$http_port"

loadgen() {  # NAME INPUT FLAGS...
  local name="$1" input="$2"
  shift 2
  "$bin/fanyi-loadgen" --input "$input" --duration_s "$duration" \
    --requests 0 --warmup_requests 64 --timeout_ms 60000 \
    --source_language en --target_language zh \
    --json "$work_dir/$name.json" "$@" >/dev/null
}

for concurrency in $concurrencies; do
  for run in $(seq "$repeats"); do
    echo "== concurrency $concurrency, run $run: gRPC, then HTTP"
    loadgen "grpc-c$concurrency-$run" "$work_dir/sentences.txt" \
      --server "127.0.0.1:$port" --concurrency "$concurrency"
    loadgen "http-c$concurrency-$run" "$work_dir/sentences.txt" \
      --server "127.0.0.1:$http_port" --http --concurrency "$concurrency"
  done
done
for run in $(seq "$repeats"); do
  echo "== posts at concurrency $html_concurrency, run $run: text, then html"
  loadgen "posts-text-$run" "$work_dir/posts.txt" --server "127.0.0.1:$port" \
    --concurrency "$html_concurrency"
  loadgen "posts-html-$run" "$work_dir/posts.html" --server "127.0.0.1:$port" \
    --concurrency "$html_concurrency" --format html
done

echo "== summary ($(nproc) cores, $(uname -m))"
python3 bench/serve_http_report.py "$work_dir"
