#!/usr/bin/env bash
# Downloads, where apt works (Debian 12), the .deb files of the gRPC,
# protobuf, abseil, prometheus-cpp and GoogleTest stack that
# scripts/build-gpu.sh unpacks on a machine without apt or network (e.g. a
# GPU host whose only C++ toolchain is the PyTorch wheel's LibTorch).
#   bash scripts/fetch-gpu-debs.sh [DIR]    # default: third_party/debs
# Carry DIR to the GPU machine beside the checkout; it is git-ignored.
# Only the named packages are fetched, not their dependencies: the rest
# (libc, libstdc++, OpenSSL and zlib runtimes) is on any glibc system.
set -euo pipefail
cd "$(dirname "$0")/.."

debs_dir="${1:-third_party/debs}"

packages=(
  # gRPC C++ and its code generator.
  libgrpc++-dev libgrpc++1.51 libgrpc-dev libgrpc29 protobuf-compiler-grpc
  # protobuf: headers, runtime, protoc.
  libprotobuf-dev libprotobuf32 libprotobuf-lite32 libprotoc32 protobuf-compiler
  # abseil (gRPC's and the binaries' flags).
  libabsl-dev libabsl20220623
  # prometheus-cpp and its embedded HTTP server.
  prometheus-cpp-dev libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0
  libprometheus-cpp-push1.0 libcivetweb-dev libcivetweb1 civetweb
  # gRPC's own dependencies.
  libre2-dev libre2-9 libc-ares-dev libc-ares2
  # Tests and headers-only libraries; libssl-dev and zlib1g-dev for the
  # CMake configs of gRPC and protobuf (their .so links are re-pointed to
  # the system's runtimes by build-gpu.sh).
  libgtest-dev libgmock-dev libssl-dev zlib1g-dev nlohmann-json3-dev
  # Boost.Beast, the HTTP server (headers only); CLD2, language detection;
  # Gumbo, the HTML5 parser; libzip and Expat, .docx files.
  libboost1.74-dev libcld2-dev libcld2-0 libgumbo-dev libgumbo1
  libzip-dev libzip4 libexpat1-dev libexpat1
  # ICU (sentence breaks) and OpenCC (Chinese scripts, with its data and
  # its trie library); pkg-config, which finds them and the three above.
  libicu-dev libicu72 libopencc-dev libopencc1.1 libopencc-data libmarisa0
  # gettext's libgettextpo, which the catalog tests compare fanyi's reader
  # with.
  libgettextpo-dev libgettextpo0
  # SQLite: users' suggestions (POST /suggest, fanyi-train); its shell for
  # the tests.
  libsqlite3-dev libsqlite3-0 sqlite3
  # hiredis: request limits shared through Redis (--redis_url).
  libhiredis-dev libhiredis0.14
  # poppler's C++ API, the text of .pdf files, and the libraries poppler
  # loads (fonts, images, colour profiles, NSS for signatures).
  libpoppler-cpp-dev libpoppler-cpp0v5 libpoppler-dev libpoppler126
  libfontconfig1 fontconfig-config libfreetype6 libbrotli1 libjpeg62-turbo
  liblcms2-2 libnspr4 libnss3 libopenjp2-7 libpng16-16 libtiff6 libdeflate0
  libjbig0 liblerc4 libwebp7
  pkgconf pkgconf-bin libpkgconf3
  # Gloo's headers, which c10d's ProcessGroupGloo.hpp includes (the wheels
  # do not ship them).
  libgloo-dev
  # spm_train and spm_encode (subword vocabularies).
  sentencepiece libsentencepiece0
  # prometheus-cpp's CMake config looks for CURL (its push library, which
  # fanyi does not link): only CMake's FindCURL sees these.
  libcurl4-openssl-dev libcurl4
)

if ! command -v apt-get >/dev/null; then
  echo "fetch-gpu-debs: needs apt-get (Debian 12)" >&2
  exit 1
fi
mkdir -p "$debs_dir"
debs_dir=$(cd "$debs_dir" && pwd)
# apt-get download writes into the current directory, as the _apt user when
# run as root: the folder must be writable by it.
chmod 0777 "$debs_dir" 2>/dev/null || true
(cd "$debs_dir" && apt-get download "${packages[@]}")
echo "fetch-gpu-debs: $(find "$debs_dir" -name '*.deb' | wc -l) .deb files in $debs_dir"
