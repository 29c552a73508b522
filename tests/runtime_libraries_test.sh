#!/usr/bin/env bash
# docker/runtime-libraries.sh on the real binaries (CTest:
# runtime_libraries_test): the images' runtime stages hold only what it
# copies, so here the copied fanyi-server and fanyi-client must load every
# library except the C and C++ runtime from the copies, with no symbol left
# undefined, and run. Debian's LibTorch links OpenCV without calling it: no
# OpenCV library may be copied.
#   tests/runtime_libraries_test.sh BIN_DIR
set -euo pipefail
bin_dir=$1
cd "$(dirname "$0")/.."

dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
bash docker/runtime-libraries.sh "$dest" "$bin_dir/fanyi-server" "$bin_dir/fanyi-client" "$bin_dir/fanyi-keys" "$bin_dir/fanyi-pdf-text"
echo "copied: $(du -sh "$dest" | cut -f1), $(find "$dest" -type f | wc -l) files"

# The loader's own folders, in $dest, come first in the search path (and
# only those: a library that the image's loader would miss, such as one only
# a link in another folder reaches, must be missed here too); a library found
# outside $dest is one the copies lack.
library_path=$dest/usr/local/lib:$dest/usr/lib/x86_64-linux-gnu:$dest/usr/lib
failed=0
for program in fanyi-server fanyi-client fanyi-keys fanyi-pdf-text; do
  report=$(LD_LIBRARY_PATH=$library_path ldd -r "$dest/usr/local/bin/$program" 2>&1)
  outside=$(awk -v dest="$dest" '$2 == "=>" && index($3, dest) != 1 {print $1}' <<<"$report" |
    grep -v -E '^(libc|libm|libpthread|libdl|librt|libresolv|libgcc_s|libstdc\+\+)\.so' || true)
  if [ -n "$outside" ]; then
    echo "FAIL $program loads libraries that were not copied: $outside"
    failed=1
  fi
  if grep -E 'not found|undefined symbol' <<<"$report"; then
    echo "FAIL $program: the copies leave the above unresolved"
    failed=1
  fi
done
if find "$dest" -name 'libopencv*' | grep .; then
  echo "FAIL OpenCV was copied: its NEEDED entries were not pruned"
  failed=1
fi

# The copies run: the server starts, refuses the missing model with the
# file named, and the client's health check reaches nothing.
server=$(LD_LIBRARY_PATH=$library_path "$dest/usr/local/bin/fanyi-server" \
  --model_dir="$dest/absent" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 2>&1 || true)
if ! grep -q "$dest/absent" <<<"$server"; then
  echo "FAIL the copied fanyi-server did not report the missing model: $server"
  failed=1
fi
if health=$(LD_LIBRARY_PATH=$library_path "$dest/usr/local/bin/fanyi-client" \
  --health --server=127.0.0.1:1 --timeout_ms=1000 2>&1) ||
  ! grep -q UNAVAILABLE <<<"$health"; then
  echo "FAIL the copied fanyi-client --health: $health"
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  exit 1
fi
echo "OK: both programs load and run from the copies alone"
