# shellcheck shell=bash
# Sourced by bench/serve.sh and scripts/soak.sh (not run on its own).
#
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
