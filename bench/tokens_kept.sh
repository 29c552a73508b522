#!/usr/bin/env bash
# Template tokens kept on a software catalog's own strings, per kind of
# token: gettext catalogs' English strings that hold one (%s, {name}, &File,
# ...) translated by a fanyi-server, with template tokens passed through
# (the default) and as text (translate_template_tokens true), beside the
# catalogs' own human translations:
#   bench/tokens_kept.sh MODEL_DIR [CATALOG.mo...]
# CATALOGs default to the zh_CN catalogs this host's packages installed
# (/usr/share/locale/zh_CN/LC_MESSAGES). Environment: LIMIT (strings
# translated, the first of them; 0 = all; 3000), BUILD_DIR (build-bench),
# JOBS (nproc), WORK_DIR (a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
model_dir="$1"
shift
catalogs=("$@")
if [[ ${#catalogs[@]} -eq 0 ]]; then
  catalogs=(/usr/share/locale/zh_CN/LC_MESSAGES/*.mo)
fi
limit="${LIMIT:-3000}"
build_dir="${BUILD_DIR:-build-bench}"
work_dir="${WORK_DIR:-$(mktemp -d)}"
mkdir -p "$work_dir"

# shellcheck source=scripts/bench_common.sh
source scripts/bench_common.sh
build_fanyi_targets "$build_dir" fanyi-server fanyi-tokens-kept

python3 scripts/catalogs.py strings "${catalogs[@]}" >"$work_dir/all.jsonl"
"$bin/fanyi-tokens-kept" --select <"$work_dir/all.jsonl" >"$work_dir/tokens.jsonl"
if [[ "$limit" -gt 0 ]]; then
  head -n "$limit" "$work_dir/tokens.jsonl" >"$work_dir/strings.jsonl"
else
  cp "$work_dir/tokens.jsonl" "$work_dir/strings.jsonl"
fi
echo "== ${#catalogs[@]} catalogs: $(wc -l <"$work_dir/all.jsonl") strings," \
  "$(wc -l <"$work_dir/tokens.jsonl") with a template token;" \
  "$(wc -l <"$work_dir/strings.jsonl") translated"

trap stop_fanyi_server EXIT
start_fanyi_server "$work_dir/server.log" "$bin/fanyi-server" \
  --model_dir "$model_dir" --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 \
  --http_listen 127.0.0.1:0 --device cpu --max_queue 4096
http_port=$(sed -n 's|.*LibreTranslate API on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' \
  "$work_dir/server.log")
url="http://127.0.0.1:$http_port"

python3 scripts/catalogs.py translate "$url" \
  <"$work_dir/strings.jsonl" >"$work_dir/kept.jsonl"
python3 scripts/catalogs.py translate "$url" --no_template_tokens \
  <"$work_dir/strings.jsonl" >"$work_dir/translated.jsonl"

echo "== fanyi, template tokens passed through (the default)"
"$bin/fanyi-tokens-kept" --field translation <"$work_dir/kept.jsonl"
echo "== fanyi, translate_template_tokens true (tokens translated as text)"
"$bin/fanyi-tokens-kept" --field translation <"$work_dir/translated.jsonl"
echo "== the catalogs' own translations"
"$bin/fanyi-tokens-kept" --field reference <"$work_dir/strings.jsonl"
echo "(lines in $work_dir)"
