#!/usr/bin/env bash
# LibreTranslate's own API tests, unchanged, against a real fanyi-server
# (CTest: libretranslate_own_tests):
#   - takes libretranslate/tests/test_api/test_*.py from LibreTranslate's
#     release on PyPI (the wheel, not installed: its dependencies are not
#     needed), LIBRETRANSLATE_VERSION (1.9.6);
#   - builds what those tests translate with, English to Spanish ("es"):
#     a random-weight model written by CTranslate2's own spec API
#     (tests/ctranslate2_models.py), read by fanyi-import;
#   - serves it with fanyi-server on 127.0.0.1 and runs the tests with
#     pytest, their Flask client replaced by one that speaks HTTP to it
#     (tests/libretranslate_tests_conftest.py).
# Usage: libretranslate_own_tests.sh BIN_DIR
# Exits 77 (skipped) only when pip cannot fetch the release or pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=$1
version=${LIBRETRANSLATE_VERSION:-1.9.6}
work_dir=$(mktemp -d)
server_pid=""
cleanup() {
  local status=$?
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -s "$work_dir/server.log" ]; then
    echo "--- server.log (last lines)" >&2
    tail -n 20 "$work_dir/server.log" >&2
  fi
  rm -rf "$work_dir"
}
trap cleanup EXIT

if ! python3 -c 'import pytest' 2>/dev/null &&
   ! python3 -m pip install --quiet --retries 1 --timeout 20 'pytest>=7,<9'; then
  echo "libretranslate_own_tests: SKIPPED: pytest cannot be installed"
  exit 77
fi
if ! python3 -m pip download --quiet --no-deps --retries 1 --timeout 20 \
    "libretranslate==$version" -d "$work_dir/wheel"; then
  echo "libretranslate_own_tests: SKIPPED: LibreTranslate $version cannot be" \
    "fetched from PyPI"
  exit 77
fi
mkdir -p "$work_dir/tests"
python3 - "$work_dir/wheel" "$work_dir/tests" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
with zipfile.ZipFile(wheel) as archive:
    names = [n for n in archive.namelist()
             if n.startswith("libretranslate/tests/test_api/test_")]
    for name in names:
        with open(os.path.join(sys.argv[2], os.path.basename(name)), "wb") as out:
            out.write(archive.read(name))
print(f"{len(names)} test files from {os.path.basename(wheel)}")
PY
cp tests/libretranslate_tests_conftest.py "$work_dir/tests/conftest.py"

python3 tests/ctranslate2_models.py "$work_dir/models" >/dev/null
"$bin_dir/fanyi-import" --out "$work_dir/en-es" --source_language en \
  --target_language es "$work_dir/models/shared/float32" >/dev/null

# The log exists before the server starts: the background job opens it
# when it runs, maybe after the first read below (which, under set -e,
# would end the script).
: >"$work_dir/server.log"
"$bin_dir/fanyi-server" --model_dir "$work_dir/en-es" --listen 127.0.0.1:0 \
  --metrics_listen 127.0.0.1:0 --http_listen 127.0.0.1:0 --threads 1 \
  --device cpu >"$work_dir/server.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 600); do
  port=$(sed -n 's|.*LibreTranslate API on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' \
    "$work_dir/server.log")
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { echo "fanyi-server exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "fanyi-server did not say where it listens" >&2; exit 1; }

FANYI_URL="http://127.0.0.1:$port" python3 -m pytest -q -p no:cacheprovider \
  "$work_dir/tests"
