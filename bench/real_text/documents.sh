#!/usr/bin/env bash
# Times a document against its sentences sent one request each:
#   bench/real_text/documents.sh MODEL_DIR [SOURCES]
# Starts fanyi-server on loopback, then alternates two fanyi-loadgen runs over
# the same consecutive SOURCES lines (one sentence per line; default the dev
# set): DOCUMENTS requests of SENTENCES lines joined into one text, one at a
# time; and the same lines as bursts of SENTENCES concurrent one-sentence
# requests, each burst timed from its first send to its last answer. Each run
# is repeated REPEATS times; the report gives the median of the runs' p50 and
# p90, and the ratio of document to burst. For scale, a third run sends the
# same sentences one request at a time.
# Environment: SENTENCES (20), DOCUMENTS (30), REPEATS (3), THREADS (server
# --threads, 2), SERVER_FLAGS (more fanyi-server flags), BUILD_DIR
# (build-bench), JOBS (nproc), WORK_DIR (/tmp/fanyi-documents-bench).
set -euo pipefail
cd "$(dirname "$0")/../.."

if [[ $# -lt 1 ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
model_dir="$1"
sources="${2:-../shared/data/en-zh/dev.tsv}"
sentences="${SENTENCES:-20}"
documents="${DOCUMENTS:-30}"
repeats="${REPEATS:-3}"
threads="${THREADS:-2}"
build_dir="${BUILD_DIR:-build-bench}"
work_dir="${WORK_DIR:-/tmp/fanyi-documents-bench}"

# shellcheck source=scripts/bench_common.sh
source scripts/bench_common.sh
build_fanyi_targets "$build_dir" fanyi-server fanyi-loadgen

rm -rf "$work_dir"
mkdir -p "$work_dir"
trap stop_fanyi_server EXIT
# shellcheck disable=SC2086  # SERVER_FLAGS is a list of flags.
start_fanyi_server "$work_dir/server.log" "$bin/fanyi-server" \
  --model_dir "$model_dir" --listen 127.0.0.1:0 \
  --metrics_listen 127.0.0.1:0 --http_listen 127.0.0.1:0 --threads "$threads" --device cpu \
  ${SERVER_FLAGS:-}
echo "== fanyi-server on 127.0.0.1:$port ($threads threads)" \
  "${SERVER_FLAGS:-}"

# Both runs warm up on the same 3 * SENTENCES lines and then measure the same
# DOCUMENTS * SENTENCES lines that follow.
loadgen() {  # NAME FLAGS...
  local name="$1"
  shift
  "$bin/fanyi-loadgen" --server "127.0.0.1:$port" --input "$sources" \
    --timeout_ms 120000 --json "$work_dir/$name.json" "$@" >/dev/null
}
for run in $(seq "$repeats"); do
  echo "== run $run: $documents documents of $sentences sentences"
  loadgen "document-$run" --sentences_per_request "$sentences" \
    --concurrency 1 --warmup_requests 3 --requests "$documents"
  echo "== run $run: the same sentences in bursts of $sentences requests"
  loadgen "burst-$run" --bursts --concurrency "$sentences" \
    --warmup_requests $((3 * sentences)) \
    --requests $((documents * sentences))
  echo "== run $run: the same sentences one request at a time"
  loadgen "sentence-$run" --concurrency 1 \
    --warmup_requests $((3 * sentences)) \
    --requests $((documents * sentences))
done

echo "== summary ($(nproc) cores, $(uname -m))"
python3 - "$work_dir" "$repeats" "$sentences" <<'EOF'
import json, statistics, sys

work_dir, repeats, sentences = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def median_of(kind, field, key):
    runs = [json.load(open(f'{work_dir}/{kind}-{run}.json'))
            for run in range(1, repeats + 1)]
    for run in runs:
        if run['status_counts'] != {'OK': run['requests_sent']}:
            sys.exit(f'{kind}: not every request succeeded: '
                     f'{run["status_counts"]}')
    return statistics.median(run[field][key] for run in runs)

print(f'| {sentences} sentences as | p50 (ms) | p90 (ms) |')
print('|---|---|---|')
rows = {'one document': ('document', 'latency_ms'),
        f'{sentences} concurrent requests': ('burst', 'burst_latency_ms'),
        'one sentence alone': ('sentence', 'latency_ms')}
figures = {}
for name, (kind, field) in rows.items():
    figures[kind] = [median_of(kind, field, key) for key in ('p50', 'p90')]
    print(f'| {name} | {figures[kind][0]:.1f} | {figures[kind][1]:.1f} |')
ratio = [d / b for d, b in zip(figures['document'], figures['burst'])]
print(f'| document / concurrent requests | {ratio[0]:.2f} | {ratio[1]:.2f} |')
EOF
