#!/usr/bin/env bash
# Copies programs into DEST/usr/local/bin, and the shared libraries they load
# into DEST at the paths the loader finds them: the runtime stage of an image
# copies DEST to / instead of installing whole packages.
#   docker/runtime-libraries.sh /staging build/bin/fanyi-server ...
#
# Debian's LibTorch links libraries it never calls (OpenCV, FFmpeg, ZeroMQ,
# LevelDB, ...), which bring GDAL, Qt and hundreds more: a library's NEEDED
# entry whose library defines none of the symbols the object uses is removed
# from the copy, and the libraries only such entries reached are left out.
# The image's build then runs `ldd -r` on the programs, which fails on any
# symbol that no copied library defines.
#
# Not copied:
# - the C and C++ runtime (glibc, libgcc_s, libstdc++): the base image has
#   them, and they must match its loader;
# - libraries that no package owns (a PyTorch wheel's): the image copies
#   their folders whole, because they open more libraries at run time;
#   their own dependencies are followed;
# - libraries the loader does not find here (the CUDA driver's libcuda):
#   the host brings them.
set -euo pipefail

if [ "$#" -lt 2 ]; then
  echo "usage: $0 DEST PROGRAM..." >&2
  exit 2
fi
dest=$1
shift

is_c_runtime() {
  case "$1" in
    ld-linux*.so* | libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | \
      librt.so.* | libresolv.so.* | libgcc_s.so.* | libstdc++.so.*)
      return 0 ;;
  esac
  return 1
}

# The dynamic symbol names an object uses (weak ones too: a weak reference
# that finds no definition changes behaviour silently) or defines, without
# their versions, one a line, sorted.
undefined_symbols() {
  nm --dynamic --undefined-only "$1" | awk '{print $NF}' | sed 's/@.*//' | sort -u
}
declare -A defined_files  # library -> the file holding its defined symbols
defined_count=0
defined_symbols() {
  if [ -z "${defined_files[$1]:-}" ]; then
    defined_count=$((defined_count + 1))
    defined_files[$1]=$scratch/defined.$defined_count
    nm --dynamic --defined-only "$1" 2>/dev/null | awk '{print $NF}' |
      sed 's/@.*//' | sort -u >"${defined_files[$1]}"
  fi
  cat "${defined_files[$1]}"
}

# Whether a Debian package owns the library the loader found at $1. dpkg
# records a file under the path its package ships (/lib or /usr/lib, the
# alternatives' target), so each spelling is tried.
owned_by_package() {
  local real_path candidate
  real_path=$(realpath "$1")
  for candidate in "$1" "$real_path" "${real_path#/usr}"; do
    if dpkg-query --search "$candidate" >/dev/null 2>&1; then
      return 0
    fi
  done
  return 1
}

# The loader looks for the NEEDED name $2 in the folder where it found $1
# (/lib is /usr/lib on merged-/usr systems), while the file itself may lie
# elsewhere (a soname link, or an alternative such as libblas.so.3 ->
# openblas-pthread/libblas.so.3): a relative link in DEST, when the copied
# library lies under $1's real path. Copied libraries only.
copy_link() {
  local real_path link
  real_path=$(realpath "$1")
  link=$(realpath "$(dirname "$1")")/$2
  if [ "$link" != "$real_path" ] && [ -e "$dest$real_path" ] &&
    [ ! -L "$dest$link" ]; then
    mkdir -p "$dest$(dirname "$link")"
    ln -s --relative "$dest$real_path" "$dest$link"
  fi
}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

declare -A copied  # real path of each object already handled
declare -A found   # NEEDED name -> the path the loader finds it at
queue=()
mkdir -p "$dest/usr/local/bin"
for program in "$@"; do
  if [[ "$program" == */* ]]; then
    path=$program
  else
    path=$(command -v "$program")
  fi
  cp "$path" "$dest/usr/local/bin/"
  queue+=("$(realpath "$path")=$dest/usr/local/bin/$(basename "$path")")
  # Where the loader finds each library when the program runs: "libfoo.so.1
  # => /lib/x86_64-linux-gnu/libfoo.so.1 (0x...)" ("=> not found" for one it
  # cannot find). One name is one library in a process, found through the
  # path it was asked for: a library's $ORIGIN is the folder of that path,
  # not of the file a link leads to (Debian's OpenBLAS depends on it).
  while read -r name arrow library _; do
    if [ "$arrow" = "=>" ] && [[ "$library" == /* ]]; then
      found[$name]=$library
    fi
  done < <(ldd "$path")
done

# Breadth first over "source=copy" pairs: the copy is the file to prune, or
# empty for an object that is not copied (a wheel's library).
while [ "${#queue[@]}" -gt 0 ]; do
  item=${queue[0]}
  queue=("${queue[@]:1}")
  object=${item%%=*}
  copy=${item#*=}

  undefined_symbols "$object" >"$scratch/undefined"
  needed=$(readelf --dynamic "$object" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for name in $needed; do
    library=${found[$name]:-}
    if is_c_runtime "$name" || [ -z "$library" ]; then
      continue
    fi
    defined_symbols "$library" >"$scratch/defined"
    if [ -z "$(comm -12 "$scratch/defined" "$scratch/undefined")" ]; then
      if [ -n "$copy" ]; then
        patchelf --remove-needed "$name" "$copy"
      fi
      continue
    fi

    real_path=$(realpath "$library")
    if [ -n "${copied[$real_path]:-}" ]; then
      copy_link "$library" "$name"
      continue
    fi
    copied[$real_path]=1
    if ! owned_by_package "$library"; then
      queue+=("$real_path=")
      continue
    fi
    mkdir -p "$dest$(dirname "$real_path")"
    cp "$real_path" "$dest$real_path"
    copy_link "$library" "$name"
    queue+=("$real_path=$dest$real_path")
  done
done
