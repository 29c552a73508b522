#!/usr/bin/env bash
# Benchmarks file translation on one fanyi-server: the same sentences as one
# HTTP /translate request (q an array), and as a .txt, .srt, .md and .docx
# through /translate_file and its download, rounds alternating; prints the
# median seconds of each and its ratio to /translate (what reading and
# writing the format costs):
#   bench/serve_files.sh MODEL_DIR [SOURCES]
# SOURCES defaults to the dev set; its first SENTENCES (100) lines are used.
# Environment: SENTENCES, ROUNDS (7), THREADS (server --threads, 2),
# BUILD_DIR (build-bench), JOBS (nproc), WORK_DIR (/tmp/fanyi-serve-files).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
model_dir="$1"
sources="${2:-../shared/data/en-zh/dev.tsv}"
build_dir="${BUILD_DIR:-build-bench}"
work_dir="${WORK_DIR:-/tmp/fanyi-serve-files}"

# shellcheck source=scripts/bench_common.sh
source scripts/bench_common.sh
build_fanyi_targets "$build_dir" fanyi-server

rm -rf "$work_dir"
mkdir -p "$work_dir"
head -n "${SENTENCES:-100}" "$sources" | cut -f1 >"$work_dir/sentences.txt"

trap stop_fanyi_server EXIT
start_fanyi_server "$work_dir/server.log" "$bin/fanyi-server" \
  --model_dir "$model_dir" --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 \
  --http_listen 127.0.0.1:0 --threads "${THREADS:-2}" --device cpu
http_port=$(sed -n 's|.*LibreTranslate API on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' \
  "$work_dir/server.log")
echo "== fanyi-server: HTTP 127.0.0.1:$http_port ($(nproc) cores, $(uname -m))"
python3 bench/serve_files.py "http://127.0.0.1:$http_port/" \
  "$work_dir/sentences.txt" "${ROUNDS:-7}"
