#!/usr/bin/env bash
# fanyi against CTranslate2 on a model of the Argos shape (6+6 layers,
# d_model 512, d_ff 2048, 8 heads, one shared vocabulary of VOCABULARY
# pieces), random weights, every translation LENGTH tokens long:
#   bench/argos_shape.sh
# Steps: build fanyi-eval; train a SentencePiece model (Debian's spm_train,
# its default nmt_nfkc normalization) on the training pairs' both sides;
# write the model in float32 and int8 with CTranslate2's spec API
# (bench/argos_shape.py); cut the first SENTENCES dev sources into pieces
# (spm_encode); time both engines, whole processes, alternating
# (bench/pieces_versus.py).
# Environment: VOCABULARY (32000), SENTENCES (200), LENGTH (30), REPEATS
# (3), THREAD_COUNTS (1,2), COMPUTE_TYPES (int8,float32), BUILD_DIR
# (build-bench; BIN_DIR: programs already built), WORK_DIR
# (/tmp/fanyi-argos-shape), DATA (../shared/data/en-zh).
set -euo pipefail
cd "$(dirname "$0")/.."

vocabulary="${VOCABULARY:-32000}"
sentences="${SENTENCES:-200}"
length="${LENGTH:-30}"
repeats="${REPEATS:-3}"
build_dir="${BUILD_DIR:-build-bench}"
work_dir="${WORK_DIR:-/tmp/fanyi-argos-shape}"
data="${DATA:-../shared/data/en-zh}"
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

if ! python3 -c 'import ctranslate2, numpy' 2>/dev/null; then
  python3 -m pip install --quiet 'ctranslate2>=4,<5' numpy
fi
# shellcheck source=scripts/bench_common.sh
source scripts/bench_common.sh
build_fanyi_targets "$build_dir" fanyi-eval

rm -rf "$work_dir"
mkdir -p "$work_dir"
echo "== SentencePiece model and the model of the Argos shape"
cut -f1,2 "$data/train.tsv" | tr '\t' '\n' >"$work_dir/text.txt"
spm_train --input="$work_dir/text.txt" --model_prefix="$work_dir/spm" \
  --vocab_size=16000 --hard_vocab_limit=false --character_coverage=0.9995 \
  --minloglevel=2
python3 bench/argos_shape.py --pieces "$work_dir/spm.vocab" \
  --vocabulary "$vocabulary" --out "$work_dir/model"
head -n "$sentences" "$data/dev.tsv" | cut -f1 |
  spm_encode --model="$work_dir/spm.model" --output_format=piece \
    >"$work_dir/sources.txt"

echo "== fanyi ÷ CTranslate2 ($(nproc) cores; $(lscpu | sed -n 's/^Model name: *//p'))"
python3 bench/pieces_versus.py --fanyi_eval "$bin/fanyi-eval" \
  --models "$work_dir/model" --sources "$work_dir/sources.txt" \
  --length "$length" --repeats "$repeats" --json "$work_dir/versus.json" \
  --thread_counts "${THREAD_COUNTS:-1,2}" \
  --compute_types "${COMPUTE_TYPES:-int8,float32}"
