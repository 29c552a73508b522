#!/usr/bin/env bash
# Puts an English-Chinese corpus in data/en-zh/ (train.tsv, dev.tsv, test.tsv,
# and the tests' small sets train_mini.tsv and dev_mini.tsv: their first 1,000
# and 200 pairs) and prints that directory. Uses ../shared/data/en-zh when it is there;
# otherwise downloads the Tatoeba pairs packaged by manythings.org/anki
# (cmn-eng.zip, CC-BY 2.0 FR) and splits them 80/10/10 with a fixed seed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -f ../shared/data/en-zh/train.tsv ] && [ -f ../shared/data/en-zh/dev.tsv ]; then
  echo "$(cd ../shared/data/en-zh && pwd)"
  exit 0
fi

out=data/en-zh
if [ -f "$out/train.tsv" ] && [ -f "$out/dev.tsv" ]; then
  [ -f "$out/train_mini.tsv" ] || head -n 1000 "$out/train.tsv" >"$out/train_mini.tsv"
  [ -f "$out/dev_mini.tsv" ] || head -n 200 "$out/dev.tsv" >"$out/dev_mini.tsv"
  echo "$(cd "$out" && pwd)"
  exit 0
fi

mkdir -p data/cmn-eng "$out"
if [ ! -f data/cmn-eng/cmn.txt ]; then
  echo "get-data: downloading cmn-eng.zip (Tatoeba, CC-BY 2.0 FR)" >&2
  # The site refuses clients without a browser-like user agent.
  curl -fsSL -A "Mozilla/5.0 (fanyi get-data)" -o data/cmn-eng/cmn-eng.zip \
    https://www.manythings.org/anki/cmn-eng.zip
  unzip -o -q data/cmn-eng/cmn-eng.zip -d data/cmn-eng
fi

# Keep the first two columns (the third is the attribution), shuffle with a
# fixed seed, then split 80/10/10.
cut -f1,2 data/cmn-eng/cmn.txt |
  shuf --random-source=<(yes fanyi) >data/cmn-eng/shuffled.tsv
total=$(wc -l <data/cmn-eng/shuffled.tsv)
train=$((total * 8 / 10))
dev=$((total / 10))
head -n "$train" data/cmn-eng/shuffled.tsv >"$out/train.tsv"
tail -n +"$((train + 1))" data/cmn-eng/shuffled.tsv | head -n "$dev" >"$out/dev.tsv"
tail -n +"$((train + dev + 1))" data/cmn-eng/shuffled.tsv >"$out/test.tsv"
# The small sets the tests train on, as ../shared/data has them.
head -n 1000 "$out/train.tsv" >"$out/train_mini.tsv"
head -n 200 "$out/dev.tsv" >"$out/dev_mini.tsv"
echo "$(cd "$out" && pwd)"
