#!/usr/bin/env bash
# Prints, one a line, the packages (dpkg) that own the shared libraries the
# given binaries link directly (their DT_NEEDED entries): what an image's
# runtime stage installs, letting apt bring those packages' own dependencies,
# so that it holds the libraries the build stage linked whatever the release
# names them (bookworm's libgrpc++1.51, noble's libgrpc++1.51t64). Libraries
# that no package owns (a PyTorch wheel's) are skipped: the image copies them.
#   docker/runtime-packages.sh build/bin/fanyi-server build/bin/fanyi-client
set -euo pipefail

for binary in "$@"; do
  # Where the loader finds each library: "libfoo.so.1 => /lib/.../libfoo.so.1
  # (0x...)"; a library "not found" here (the CUDA driver's libcuda) comes
  # from the host at run time.
  resolved=$(ldd "$binary")
  needed=$(readelf --dynamic "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for name in $needed; do
    library=$(awk -v name="$name" '$1 == name && $3 ~ /^\// {print $3}' <<<"$resolved")
    if [ -z "$library" ]; then
      continue
    fi
    real_path=$(realpath "$library")
    # dpkg records a file under the path its package ships (/lib or /usr/lib,
    # the alternatives' target for libblas.so.3), so try each spelling.
    for candidate in "$library" "$real_path" "${real_path#/usr}" "/usr$library"; do
      if owner=$(dpkg-query --search "$candidate" 2>/dev/null); then
        owner=${owner%%:*}  # "libfoo1:amd64: /path" or "pkg-a, pkg-b: /path"
        echo "${owner%%,*}"
        break
      fi
    done
  done
done | sort -u
