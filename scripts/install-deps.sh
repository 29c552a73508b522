#!/usr/bin/env bash
# Installs the Debian packages fanyi needs to build, test and run. Idempotent:
# does nothing when every package is already installed. With --tests, also
# what only the tests use (a browser for the web page's test), which the
# images and a build alone do without.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  # LLVM's linker: links the test binaries ten times faster than GNU ld.
  lld
  # clang and its sanitizer runtimes: the sanitizer builds
  # (scripts/sanitize.sh) and the fuzz targets (scripts/fuzz.sh).
  clang libclang-rt-dev
  libtorch-dev libopenblas0-pthread
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev prometheus-cpp-dev
  # Boost.Beast (headers only): the HTTP server of LibreTranslate's API.
  libboost-dev
  libgtest-dev libgmock-dev nlohmann-json3-dev
  # Gloo's headers, which LibTorch's c10d Gloo process group includes
  # (data-parallel training).
  libgloo-dev
  # Sentence breaks (ICU) and Simplified/Traditional Chinese (OpenCC, with
  # its dictionaries).
  libicu-dev libopencc-dev libopencc-data
  # Language detection (CLD2) for source "auto"; HTML5 parsing (Gumbo) for
  # format=html.
  libcld2-dev libgumbo-dev
  # Files: .docx, .pptx, .odt, .odp and .epub packages (libzip) and their
  # XML (Expat); the text of .pdf files (poppler).
  libzip-dev libexpat1-dev libpoppler-cpp-dev
  # Gettext catalogs: gettext's own tools (msgfmt, msgunfmt, msgconv) and
  # reader (libgettextpo), which the catalog tests check fanyi's against.
  gettext libgettextpo-dev
  # Users' suggestions (POST /suggest; fanyi-train reads them back): SQLite,
  # and its shell, which the tests use to write LibreTranslate's own file.
  libsqlite3-dev sqlite3
  # Request limits shared by replicas (--redis_url): hiredis, Redis's own C
  # client.
  libhiredis-dev
  # SentencePiece's trainer and encoder programs: fanyi-train runs spm_train
  # for subword vocabularies, tests compare with spm_encode. (Not
  # libsentencepiece: see common/text/subword_model.h.)
  sentencepiece
  # XNNPACK, only as a reference that bench's fanyi-kernels times the CPU
  # path's own kernels against.
  libxnnpack-dev libpthreadpool-dev
  curl unzip
  # docker/runtime-libraries.sh: the images copy the shared libraries their
  # programs load, less the NEEDED entries they never call (patchelf).
  patchelf
  # TLS: certificate checks in the server (libssl-dev) and the throwaway
  # certificates tests/tls_test.cc makes (openssl).
  libssl-dev openssl
  # tests/deploy_lint.sh: promtool (the prometheus package) and yamllint;
  # tests/prometheus_integration.sh: the prometheus server itself.
  prometheus yamllint
)
if [ "${1:-}" = "--tests" ]; then
  # tests/web_page_test drives the page in a real headless Chromium.
  packages+=(chromium chromium-driver)
  # The limits shared through a real Redis (tests/redis_limits_test.cc).
  packages+=(redis-server)
  # Documents made and opened by their real producers
  # (tests/office_documents.py): LibreOffice writes .pdf files and opens
  # the translated .odt, .odp, .pptx and .docx; pdftotext reads .pdf files.
  packages+=(libreoffice-writer-nogui libreoffice-impress-nogui poppler-utils)
fi
# kubectl for the same test: Debian's kubernetes-client, unless a kubectl is
# already there (another package's /usr/bin/kubectl would conflict).
if ! command -v kubectl >/dev/null; then
  packages+=(kubernetes-client)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$package")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"

# The tests run their own Prometheus (promtool, and a server on a free port):
# where systemd runs, the package's postinst enables and starts a Prometheus
# server on port 9090; stop it.
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
  "${sudo_cmd[@]}" systemctl disable --now prometheus.service || true
fi
