#!/usr/bin/env bash
# Scrapes a real fanyi-server with a real Prometheus (CTest:
# prometheus_integration, label prometheus):
#   - trains a tiny model with fanyi-train (30 pairs of en-zh/train_mini.tsv)
#   - starts fanyi-server on 127.0.0.1 (gRPC and metrics on free ports)
#   - starts Debian's prometheus on a free loopback port with its own TSDB
#     and deploy/prometheus/prometheus.yml (and its alert rules) pointed at
#     the server, scraping every second
#   - sends translations with fanyi-loadgen (open loop) while querying
#     /api/v1/query until the p99 request latency is a number, then checks
#     the Grafana dashboard's own p99 query and its job variable's lookup
# Usage: prometheus_integration.sh BIN_DIR SHARED_DATA_DIR
# Exits 77 (skipped) only when the prometheus binary is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=$1
# The corpus scripts/test.sh found or downloaded, else ../shared/data.
shared_data_dir=${FANYI_TEST_DATA:-$2}
# A bounded wait for every step; generous for a loaded 2-core machine.
wait_limit_s=60
# Grafana's $__rate_interval is at least four scrape intervals (1 s here).
rate_window=5s

if ! command -v prometheus >/dev/null; then
  echo "prometheus_integration: SKIPPED: no prometheus binary" \
    "(Debian package prometheus, scripts/install-deps.sh)"
  exit 77
fi
for tool in curl python3; do
  command -v "$tool" >/dev/null || {
    echo "prometheus_integration: $tool not found" >&2
    exit 1
  }
done

work_dir=$(mktemp -d)
pids=()
cleanup() {
  local status=$? pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "$status" -ne 0 ]; then
    for log in server loadgen prometheus; do
      if [ -s "$work_dir/$log.log" ]; then
        echo "--- $log.log (last lines)" >&2
        tail -n 20 "$work_dir/$log.log" >&2
      fi
    done
  fi
  rm -rf "$work_dir"
}
trap cleanup EXIT

fail() {
  echo "prometheus_integration: FAILED: $*" >&2
  exit 1
}

# A TCP port that was free a moment ago (Prometheus cannot report the port
# it bound; a lost race is retried below).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Runs PromQL $1 against Prometheus and prints the JSON answer.
query() {
  curl -sfG --max-time 5 --data-urlencode "query=$1" \
    "http://127.0.0.1:$prometheus_port/api/v1/query"
}

# Reads a query answer on stdin; prints "label=value,... value" for each
# series whose value is a finite number and exits 1 when there is none.
finite_samples() {
  python3 -c '
import json, math, sys
answer = json.load(sys.stdin)
found = False
if answer.get("status") == "success" and answer["data"]["resultType"] == "vector":
    for series in answer["data"]["result"]:
        value = float(series["value"][1])
        if math.isfinite(value):
            labels = ",".join(f"{k}={v}" for k, v in sorted(series["metric"].items()))
            print(f"{{{labels}}} {value:g}")
            found = True
sys.exit(0 if found else 1)'
}

# Polls PromQL $1 until it yields a finite sample; prints the samples.
wait_for_number() {
  local promql=$1 deadline=$((SECONDS + wait_limit_s)) answer
  while [ "$SECONDS" -lt "$deadline" ]; do
    if answer=$(query "$promql") && finite_samples <<<"$answer"; then
      return 0
    fi
    kill -0 "$loadgen_pid" 2>/dev/null || fail "fanyi-loadgen exited early"
    sleep 0.5
  done
  fail "no number from $promql within ${wait_limit_s}s; last answer: ${answer:-none}"
}

echo "== tiny model"
head -n 30 "$shared_data_dir/en-zh/train_mini.tsv" >"$work_dir/pairs.tsv"
[ "$(wc -l <"$work_dir/pairs.tsv")" -eq 30 ] || fail "cannot read en-zh/train_mini.tsv"
"$bin_dir/fanyi-train" --train "$work_dir/pairs.tsv" --dev "$work_dir/pairs.tsv" \
  --out "$work_dir/model" --layers 1 --d_model 32 --d_ff 64 --heads 2 \
  --dropout 0 --max_positions 64 --label_smoothing 0 --batch_tokens 128 \
  --warmup 50 --epochs 150 --validate_every 150 --threads 1 --device cpu \
  2>"$work_dir/train.log" || { tail -n 20 "$work_dir/train.log" >&2; fail "fanyi-train"; }
echo "trained $work_dir/model/best"

echo "== fanyi-server"
"$bin_dir/fanyi-server" --model_dir "$work_dir/model/best" \
  --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 --threads 1 --device cpu \
  >"$work_dir/server.log" 2>&1 &
server_pid=$!
pids+=("$server_pid")
deadline=$((SECONDS + wait_limit_s))
until grep -q "listening on" "$work_dir/server.log"; do
  kill -0 "$server_pid" 2>/dev/null || fail "fanyi-server exited"
  [ "$SECONDS" -lt "$deadline" ] || fail "fanyi-server did not start"
  sleep 0.2
done
# "listening on 127.0.0.1:P, metrics on http://127.0.0.1:M/metrics, ..."
grpc_port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$work_dir/server.log")
metrics_port=$(sed -n 's|.*metrics on http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$work_dir/server.log")
[ -n "$grpc_port" ] && [ -n "$metrics_port" ] || fail "no ports in: $(cat "$work_dir/server.log")"
echo "gRPC on 127.0.0.1:$grpc_port, metrics on 127.0.0.1:$metrics_port"

echo "== prometheus"
# The project's configuration with its alert rules; only the target and the
# intervals change, and each change is checked to have happened.
mkdir -p "$work_dir/prometheus"
cp deploy/prometheus/rules.yml "$work_dir/prometheus/rules.yml"
config="$work_dir/prometheus/prometheus.yml"
sed -e "s/\"127\.0\.0\.1:9464\"/\"127.0.0.1:$metrics_port\"/" \
  -e 's/^\(  scrape_interval:\) .*/\1 1s/' \
  -e 's/^\(  evaluation_interval:\) .*/\1 1s/' \
  deploy/prometheus/prometheus.yml >"$config"
grep -q "\"127.0.0.1:$metrics_port\"" "$config" &&
  grep -q '^  scrape_interval: 1s' "$config" &&
  grep -q '^  evaluation_interval: 1s' "$config" ||
  fail "deploy/prometheus/prometheus.yml changed shape; update this test's rewrite"
job=$(sed -n 's/^  - job_name: *//p' "$config")
[ -n "$job" ] || fail "no job_name in deploy/prometheus/prometheus.yml"
for attempt in 1 2 3; do
  prometheus_port=$(free_port)
  prometheus --config.file="$config" --storage.tsdb.path="$work_dir/tsdb" \
    --web.listen-address="127.0.0.1:$prometheus_port" --log.level=warn \
    >"$work_dir/prometheus.log" 2>&1 &
  prometheus_pid=$!
  deadline=$((SECONDS + wait_limit_s))
  while kill -0 "$prometheus_pid" 2>/dev/null &&
      ! curl -sf --max-time 2 "http://127.0.0.1:$prometheus_port/-/ready" >/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "prometheus not ready"
    sleep 0.2
  done
  if kill -0 "$prometheus_pid" 2>/dev/null; then
    pids+=("$prometheus_pid")
    break
  fi
  wait "$prometheus_pid" || true
  grep -q "address already in use" "$work_dir/prometheus.log" ||
    fail "prometheus exited: $(tail -n 5 "$work_dir/prometheus.log")"
  [ "$attempt" -lt 3 ] || fail "prometheus found no free port"
done
echo "$(prometheus --version 2>&1 | head -1) on 127.0.0.1:$prometheus_port, job $job"

echo "== traffic and queries"
"$bin_dir/fanyi-loadgen" --server "127.0.0.1:$grpc_port" --input "$work_dir/pairs.tsv" \
  --rate 20 --duration_s "$((2 * wait_limit_s))" >"$work_dir/loadgen.log" 2>&1 &
loadgen_pid=$!
pids+=("$loadgen_pid")

p99="histogram_quantile(0.99, sum by (le) (rate(fanyi_request_duration_seconds_bucket[$rate_window])))"
echo "$p99:"
wait_for_number "$p99"

# The dashboard's p99 latency panel, with Grafana's variables filled in.
dashboard_p99=$(python3 - "$rate_window" "$job" <<'EOF'
import json, sys
rate_window, job = sys.argv[1:]
with open("deploy/grafana/fanyi-dashboard.json") as f:
    dashboard = json.load(f)
exprs = [target["expr"] for panel in dashboard["panels"]
         for target in panel.get("targets", [])
         if target["expr"].startswith("histogram_quantile(0.99")
         and "fanyi_request_duration_seconds_bucket" in target["expr"]]
if len(exprs) != 1:
    sys.exit(f"expected one p99 request latency query in the dashboard, found {len(exprs)}")
print(exprs[0].replace("$__rate_interval", rate_window).replace("$job", job))
EOF
) || fail "dashboard p99 query"
echo "dashboard: $dashboard_p99:"
wait_for_number "$dashboard_p99"

# The dashboard's job variable is label_values(fanyi_model_info, job).
jobs_answer=$(curl -sfG --max-time 5 --data-urlencode "match[]=fanyi_model_info" \
  "http://127.0.0.1:$prometheus_port/api/v1/label/job/values") ||
  fail "job label values"
python3 -c '
import json, sys
sys.exit(0 if sys.argv[2] in json.loads(sys.argv[1])["data"] else 1)' \
  "$jobs_answer" "$job" || fail "dashboard job variable: $jobs_answer"
echo "dashboard job variable: $jobs_answer"

# The latency came from answered translations, not only errors.
echo 'sum(fanyi_requests_total{code="OK"}):'
wait_for_number 'sum(fanyi_requests_total{code="OK"}) > 0'
echo "prometheus_integration: passed"
