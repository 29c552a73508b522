#!/usr/bin/env bash
# The whole product on a fresh machine: installs dependencies if missing,
# builds, gets the data, trains a small model if there is none (a few minutes
# on 2 cores), starts the server, translates through it, shows the metrics.
#
# MODEL_DIR (default models/demo), DEMO_MINUTES (training budget, default 5),
# PORT (gRPC, default 50051), HTTP_PORT (LibreTranslate's API, default 5000)
# and METRICS_PORT (default 9464) may be set.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/build.sh
bin=build/bin
model_dir="${MODEL_DIR:-models/demo}"
port="${PORT:-50051}"
http_port="${HTTP_PORT:-5000}"
metrics_port="${METRICS_PORT:-9464}"

data_dir=$(bash scripts/get-data.sh)
if [ ! -f "$model_dir/best/config.json" ]; then
  echo "demo: training a small model for ${DEMO_MINUTES:-5} minutes into $model_dir"
  "$bin/fanyi-train" --train "$data_dir/train.tsv" --dev "$data_dir/dev.tsv" \
        --out "$model_dir" --layers 2 --max_minutes "${DEMO_MINUTES:-5}" \
        --resume  # An interrupted demo run continues rather than restarts.
fi

log=$(mktemp)
"$bin/fanyi-server" --model_dir "$model_dir" --listen "127.0.0.1:$port" \
  --http_listen "127.0.0.1:$http_port" \
  --metrics_listen "127.0.0.1:$metrics_port" >"$log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT

# Wait until the server answers (it loads the model first).
for _ in $(seq 1 100); do
  if "$bin/fanyi-client" --server "127.0.0.1:$port" --timeout_ms 1000 \
      "Hello." >/dev/null 2>&1; then
    break
  fi
  if ! kill -0 "$server" 2>/dev/null; then
    cat "$log" >&2
    echo "demo: the server did not start" >&2
    exit 1
  fi
  sleep 0.2
done
cat "$log"

sentences=(
  "I love you."
  "Where is the train station?"
  "My mother hates writing letters."
  "Tom doesn't like coffee."
  "It's raining today."
)
echo
echo "Translations from the server at 127.0.0.1:$port:"
"$bin/fanyi-client" --server "127.0.0.1:$port" "${sentences[@]}" |
  paste <(printf '%s\n' "${sentences[@]}") - |
  sed 's/\t/  ->  /'

echo
echo "The same server over LibreTranslate's HTTP API:"
echo "  curl -s http://127.0.0.1:$http_port/translate -H 'Content-Type: application/json' \\"
echo "    -d '{\"q\": [\"Good morning.\", \"How are you?\"], \"source\": \"en\", \"target\": \"zh-Hant\"}'"
curl -fsS "http://127.0.0.1:$http_port/translate" \
  -H 'Content-Type: application/json' \
  -d '{"q": ["Good morning.", "How are you?"], "source": "en", "target": "zh-Hant"}'
echo

echo
echo "A subtitle file through /translate_file (timings kept):"
subtitles=$(mktemp --suffix=.srt)
printf '1\n00:00:01,000 --> 00:00:03,000\nWhere is the train station?\n\n2\n00:00:04,000 --> 00:00:06,000\n<i>It'"'"'s raining today.</i>\n' >"$subtitles"
file_url=$(curl -fsS "http://127.0.0.1:$http_port/translate_file" \
  -F "file=@$subtitles;filename=talk.srt" -F source=en -F target=zh-Hans |
  sed -n 's/.*"translatedFileUrl":"\([^"]*\)".*/\1/p')
rm -f "$subtitles"
curl -fsS "$file_url"

echo
echo "Prometheus metrics: http://127.0.0.1:$metrics_port/metrics"
curl -fsS "http://127.0.0.1:$metrics_port/metrics" |
  grep -E '^fanyi_(requests_total|generated_tokens_total|model_info)' || true

echo
echo "To try the page in a browser, serve the model and open"
echo "http://127.0.0.1:$http_port/ :"
echo "  $bin/fanyi-server --model_dir $model_dir --http_listen 127.0.0.1:$http_port"
