#!/usr/bin/env bash
# Builds fanyi against the LibTorch inside a PyTorch 2.x wheel (CUDA), on a
# machine without apt or network: the gRPC/protobuf/abseil/prometheus-cpp
# stack comes as the Debian 12 .deb files of scripts/fetch-gpu-debs.sh,
# unpacked with `dpkg -x` into a prefix inside the build folder.
#   bash scripts/fetch-gpu-debs.sh     # where apt works; carry third_party/debs
#   bash scripts/build-gpu.sh [CMAKE_ARG...]
# Environment:
#   TORCH_CMAKE_PREFIX  torch's CMake prefix path (torch.utils.cmake_prefix_path);
#   TORCH_DIR           or the torch package folder (site-packages/torch, or an
#                       unzipped wheel's torch/): uses TORCH_DIR/share/cmake;
#                       neither: asks `python3 -c 'import torch'`.
#   DEBS_DIR            the .deb folder (default third_party/debs); set it empty
#                       to use the system's packages (scripts/install-deps.sh).
#   BUILD_DIR, JOBS     build folder (default build-gpu) and parallel jobs.
#   TARGETS             the targets to build, space-separated (default: all).
# Binaries land in BUILD_DIR/bin with an RPATH (not RUNPATH) naming the prefix
# and the wheel's lib/, so they run without LD_LIBRARY_PATH; the wheel's CUDA
# libraries (nvidia-* wheels) are found through libtorch_cuda's own RPATH.
# Built this way against torch 2.11.0+cu130 with GCC 12 (C++17) and nvcc
# 13.0 (docs/benchmarks.md, "GPU"). Needs, besides the compiler, a CUDA
# toolkit (nvcc, headers) of the wheel's CUDA major version, which the CUDA
# wheels' TorchConfig.cmake looks up, and the nvidia-* wheels torch depends on
# (the linker checks libtorch_cuda's NCCL and cuDNN symbols against them:
# build-gpu.sh points it at ../nvidia/*/lib beside the torch folder).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build-gpu}"
jobs="${JOBS:-$(nproc)}"
debs_dir="${DEBS_DIR-third_party/debs}"
multiarch=x86_64-linux-gnu

fail() {
  echo "build-gpu: $*" >&2
  exit 1
}

# torch's CMake prefix path, from the environment or the wheel.
if [ -n "${TORCH_CMAKE_PREFIX:-}" ]; then
  torch_prefix="$TORCH_CMAKE_PREFIX"
elif [ -n "${TORCH_DIR:-}" ]; then
  torch_prefix="$TORCH_DIR/share/cmake"
else
  torch_prefix=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)') ||
    fail "no TORCH_CMAKE_PREFIX or TORCH_DIR, and python3 cannot import torch"
fi
[ -f "$torch_prefix/Torch/TorchConfig.cmake" ] ||
  fail "$torch_prefix/Torch/TorchConfig.cmake not found (is it a PyTorch wheel?)"
torch_prefix=$(cd "$torch_prefix" && pwd)
# The torch package folder (lib/, include/) is a prefix too: TorchConfig's
# find_library calls search CMAKE_PREFIX_PATH before their hint, and would
# otherwise take a system LibTorch (Debian's libtorch-dev) over the wheel's.
torch_root=$(cd "$torch_prefix/../.." && pwd)

# The path of the system's runtime library `soname` (e.g. libz.so.1).
system_library() {
  local soname=$1 dir
  if command -v ldconfig >/dev/null; then
    # awk reads to the end: an early exit would fail ldconfig with SIGPIPE.
    ldconfig -p | awk -v name="$soname" '$1 == name && /x86-64/ && !path { path = $NF }
                                          END { print path }'
    return
  fi
  for dir in /lib/$multiarch /usr/lib/$multiarch /lib64 /usr/lib64; do
    if [ -e "$dir/$soname" ]; then
      echo "$dir/$soname"
      return
    fi
  done
}

# Unpacks every .deb into `prefix`; dpkg -x where dpkg exists, else ar + tar.
unpack_debs() {
  local prefix=$1 deb member
  rm -rf "$prefix"
  mkdir -p "$prefix"
  for deb in "$debs_dir"/*.deb; do
    if command -v dpkg >/dev/null; then
      dpkg -x "$deb" "$prefix"
    else
      member=$(ar t "$deb" | grep '^data\.tar')
      ar p "$deb" "$member" | tar -x -a -f - -C "$prefix" 2>/dev/null ||
        ar p "$deb" "$member" | tar -x --zstd -f - -C "$prefix"
    fi
  done
  # The -dev packages link libz.so, libssl.so and libcrypto.so to runtimes
  # that were not carried (every system has its own): point them there.
  local lib_dir="$prefix/usr/lib/$multiarch" name runtime
  for name in libz.so.1 libssl.so.3 libcrypto.so.3; do
    runtime=$(system_library "$name")
    [ -n "$runtime" ] || fail "the system has no $name (needed by gRPC)"
    ln -sfn "$runtime" "$lib_dir/${name%.*}"
  done
}

cmake_prefix_path="$torch_root;$torch_prefix"
# FindProtobuf would take the protobuf 3.13 headers and protoc inside the
# wheel (the torch folder leads the prefix path): name the real ones.
protobuf_root=/usr
if [ -n "$debs_dir" ]; then
  compgen -G "$debs_dir/*.deb" >/dev/null ||
    fail "no .deb files in $debs_dir: run scripts/fetch-gpu-debs.sh where apt works (or DEBS_DIR= for system packages)"
  mkdir -p "$build_dir"
  prefix="$(cd "$build_dir" && pwd)/deps"
  unpack_debs "$prefix"
  cmake_prefix_path="$prefix/usr;$torch_root;$torch_prefix"
  protobuf_root="$prefix/usr"
  # The .pc files say prefix=/usr: pkg-config reads only the unpacked ones
  # and puts the prefix before the paths they give.
  export PKG_CONFIG_LIBDIR="$prefix/usr/lib/$multiarch/pkgconfig:$prefix/usr/share/pkgconfig"
  export PKG_CONFIG_SYSROOT_DIR="$prefix"
  # protoc and grpc_cpp_plugin run during the build and load libprotoc etc.
  export LD_LIBRARY_PATH="$prefix/usr/lib/$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$prefix/usr/bin:$PATH"
  echo "build-gpu: $(find "$debs_dir" -name '*.deb' | wc -l) .deb files unpacked into $prefix"
fi
echo "build-gpu: LibTorch from $torch_prefix"

# DT_RPATH rather than DT_RUNPATH: it also serves the libraries' own
# dependencies (libgrpc++ -> libabsl_*), which RUNPATH does not.
linker_flags="-Wl,--disable-new-dtags"
# The linker checks libtorch_cuda's NCCL/cuDNN symbols against the nvidia-*
# wheels beside torch (its RPATH names them), not against older copies that a
# CUDA toolkit may keep in the directories CMake adds to the link.
for nvidia_lib in "$torch_root"/../nvidia/*/lib; do
  if [ -d "$nvidia_lib" ]; then
    linker_flags+=" -Wl,-rpath-link,$(cd "$nvidia_lib" && pwd)"
  fi
done

generator=()
if command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
# Paths relative to the checkout in ccache keys: fresh clones reuse the cache.
export CCACHE_BASEDIR="$PWD"
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$cmake_prefix_path" \
  -DProtobuf_INCLUDE_DIR="$protobuf_root/include" \
  -DProtobuf_PROTOC_EXECUTABLE="$protobuf_root/bin/protoc" \
  -DCMAKE_LIBRARY_ARCHITECTURE="$multiarch" \
  -DCMAKE_EXE_LINKER_FLAGS="$linker_flags" \
  -DCMAKE_SHARED_LINKER_FLAGS="$linker_flags" \
  "$@"
# shellcheck disable=SC2086 # TARGETS is a list.
cmake --build "$build_dir" -j "$jobs" ${TARGETS:+--target $TARGETS}
