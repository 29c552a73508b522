#!/usr/bin/env bash
# Prepares and starts training on a synthetic corpus of millions of pairs,
# made from the training data, and prints the figures docs/benchmarks.md
# records: preparation time and peak memory, and the trainer's time to its
# first step, peak memory and tokens/s.
#
#   bench/training/large_corpus.sh [PAIRS] [WORK_DIR]
#
# PAIRS (5000000) lines, each 1 to 3 random training pairs joined (sources
# with a space, targets as they are), so that lengths vary as in real
# corpora; seeded, so every run makes the same corpus. WORK_DIR
# (/tmp/fanyi-large-corpus) gets the corpus (about 0.6 GB for 5 million), the
# prepared shards and a short training run. THREADS (all cores) and STEPS
# (30) may be set.
set -euo pipefail
cd "$(dirname "$0")/../.."

pairs="${1:-5000000}"
work="${2:-/tmp/fanyi-large-corpus}"
threads="${THREADS:-$(nproc)}"
steps="${STEPS:-30}"
data_dir=../shared/data/en-zh
[ -f "$data_dir/train.tsv" ] || data_dir=data/en-zh
[ -f "$data_dir/train.tsv" ] || bash scripts/get-data.sh
# A dev set of 200 pairs, where there is one, keeps validation short.
dev="$data_dir/dev_mini.tsv"
[ -f "$dev" ] || dev="$data_dir/dev.tsv"

bash scripts/build.sh >/dev/null
if ! [ -x /usr/bin/time ]; then
  apt-get install -y -q --no-install-recommends time >/dev/null
fi
mkdir -p "$work"
corpus="$work/train-$pairs.tsv"
if ! [ -s "$corpus" ]; then
  echo "making $corpus"
  awk -F'\t' -v pairs="$pairs" 'BEGIN { srand(17) }
    { source[NR] = $1; target[NR] = $2 }
    END {
      for (i = 0; i < pairs; ++i) {
        joined = 1 + int(rand() * 3)
        s = ""; t = ""
        for (j = 0; j < joined; ++j) {
          k = 1 + int(rand() * NR)
          s = s (j ? " " : "") source[k]; t = t target[k]
        }
        print s "\t" t
      }
    }' "$data_dir/train.tsv" >"$corpus"
fi
ls -l "$corpus"

# Peak RSS (kB) and wall time from GNU time's report.
report() {
  awk -F': ' '/Maximum resident set size/ { rss = $2 / 1024 }
              /Elapsed \(wall clock\)/ { wall = $2 }
              END { printf "wall %s, peak RSS %.0f MB\n", wall, rss }' "$1"
}

rm -rf "$work/prepared" "$work/run"
/usr/bin/time -v -o "$work/prepare.time" build/bin/fanyi-prepare \
  --train "$corpus" --dev "$dev" --out "$work/prepared" \
  --threads "$threads" 2>"$work/prepare.log"
cat "$work/prepare.log"
echo "fanyi-prepare: $(report "$work/prepare.time")"
du -sh "$work/prepared"

# A short run: the first steps show the time to start and the rate.
/usr/bin/time -v -o "$work/train.time" build/bin/fanyi-train \
  --data "$work/prepared" --out "$work/run" --max_steps "$steps" \
  --threads "$threads" --average_last 0 2>"$work/train.log"
grep -E "^data:|^model:|first step|^epoch" "$work/train.log"
echo "fanyi-train: $(report "$work/train.time")"
