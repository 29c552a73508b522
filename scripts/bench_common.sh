# shellcheck shell=bash
# What the benchmarks and the soak share: sourced by bench/run.sh,
# bench/serve.sh, bench/models.sh, bench/real_text/documents.sh and
# scripts/soak.sh (not run on its own).
#
# build_fanyi_targets BUILD_DIR TARGET...: configures a Release build in
# BUILD_DIR (ccache keys relative to the checkout, JOBS parallel jobs, all
# cores by default) and builds TARGETs; sets bin to BUILD_DIR/bin. With
# BIN_DIR set, builds nothing and uses the programs there (a CUDA build of
# scripts/build-gpu.sh, say, on a host that cannot build).
build_fanyi_targets() {
  local build_dir="$1"
  shift
  if [[ -n "${BIN_DIR:-}" ]]; then
    # shellcheck disable=SC2034  # For the script that sources this.
    bin="$BIN_DIR"
    return
  fi
  CCACHE_BASEDIR="$PWD" cmake -S . -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
  CCACHE_BASEDIR="$PWD" cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" \
    --target "$@" >/dev/null
  # shellcheck disable=SC2034  # For the script that sources this.
  bin="$build_dir/bin"
}

# start_fanyi_server LOG COMMAND...: runs COMMAND (a fanyi-server with
# --listen and --metrics_listen on 127.0.0.1, usually port 0) in the
# background with its output in LOG, waits until it is listening, and sets
# server_pid, port and metrics_port. Exits the calling script, showing LOG,
# when the server dies or never says where it listens.
start_fanyi_server() {
  local log="$1"
  shift
  "$@" >"$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 600); do
    grep -q "listening on" "$log" && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
  done
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$log")
  metrics_port=$(sed -n "s|.*metrics on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p" \
    "$log")
  [[ -n "$port" && -n "$metrics_port" ]] || { cat "$log" >&2; exit 1; }
}

# stop_fanyi_server: stops the server start_fanyi_server started (SIGTERM,
# a graceful shutdown) and waits for it; nothing when none runs. Scripts
# trap it on EXIT.
stop_fanyi_server() {
  if [[ -n "${server_pid:-}" ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
