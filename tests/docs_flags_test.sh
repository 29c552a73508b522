#!/usr/bin/env bash
# Every flag each program defines (its own, as --helpfull lists them; not
# abseil's) is named as --flag on the page that documents the program, so
# that a new flag cannot go undocumented.
#   tests/docs_flags_test.sh BIN_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
bin_dir="$1"

pages=(
  "fanyi-train docs/trainer.md"
  "fanyi-prepare docs/trainer.md"
  "fanyi-average docs/trainer.md"
  "fanyi-server docs/server.md"
  "fanyi-pdf-text docs/server.md"
  "fanyi-client docs/cli.md"
  "fanyi-eval docs/cli.md"
  "fanyi-import docs/cli.md"
  "fanyi-loadgen docs/cli.md"
  "fanyi-keys docs/http-api.md"
  "fanyi-bench bench/README.md"
  "fanyi-kernels bench/README.md"
  "fanyi-export bench/README.md"
  "fanyi-tokens-kept bench/README.md"
)
missing=0
for entry in "${pages[@]}"; do
  read -r program page <<<"$entry"
  # The flags under "Flags from <file>:" headings of fanyi's own sources;
  # abseil's own (--flagfile, --helpfull, ...) are under its paths.
  flags=$("$bin_dir/$program" --helpfull 2>&1 | awk '
    /^  Flags from / { ours = ($3 !~ /absl\//); next }
    ours && /^    --[a-z0-9_]+ / { sub(/^    --/, ""); print $1 }' || true)
  if [ -z "$flags" ]; then
    echo "$program: --helpfull lists no flags of its own" >&2
    missing=1
    continue
  fi
  count=0
  for flag in $flags; do
    count=$((count + 1))
    if ! grep -qE -- "--${flag}([^a-z0-9_]|$)" "$page"; then
      echo "$program --$flag is not in $page" >&2
      missing=1
    fi
  done
  echo "$program: $count flags, each in $page"
done
exit "$missing"
