#!/usr/bin/env bash
# Benchmarks fanyi's decoding against CTranslate2 on one checkpoint:
#   bench/run.sh MODEL_DIR [SOURCES]
# MODEL_DIR is a fanyi checkpoint (or a training output directory holding
# best/). To get one, train the demo model (about 5 minutes on 2 cores):
#   build/bin/fanyi-train --train ../shared/data/en-zh/train.tsv \
#     --dev ../shared/data/en-zh/dev.tsv --out /tmp/bench-model --layers 2 \
#     --d_model 128 --d_ff 512 --heads 4 --batch_tokens 2048 --warmup 800 \
#     --lr_factor 2 --max_minutes 5 --threads 2
# SOURCES defaults to the dev set (a TSV; its first column is used).
#
# Steps: build fanyi-export and fanyi-bench; export the weights and convert
# them to CTranslate2 (scripts/convert_ctranslate2.py); time fanyi (A: greedy
# batch 1 and BATCH, beam BEAM at BATCH; C: the no-cache reference decoder on
# the first REFERENCE sentences); check that CTranslate2's greedy output
# equals fanyi's on >= 99% of sentences; time CTranslate2 on the same token
# ids with the same threads, in float32 (B) and int8 (B8); time fanyi in
# int8 (A8, --compute_type int8) and with LibTorch's own decoding step (A0,
# --cpu_decoder libtorch) for the same modes; print a table with A÷B,
# A8÷B8, A÷A0 and A÷C.
# Environment: THREADS (2), WORKERS (1; decoding streams of A and B, which
# split THREADS between them; C always runs one stream), REPEATS (3),
# BATCH (32), BEAM (4), REFERENCE (200), BUILD_DIR (build-bench),
# JOBS (nproc), WORK_DIR (/tmp/fanyi-bench). Needs the network only for pip
# when ctranslate2 or numpy is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
  sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
model_dir="$1"
sources="${2:-../shared/data/en-zh/dev.tsv}"
threads="${THREADS:-2}"
workers="${WORKERS:-1}"
repeats="${REPEATS:-3}"
batch="${BATCH:-32}"
beam="${BEAM:-4}"
reference="${REFERENCE:-200}"
build_dir="${BUILD_DIR:-build-bench}"
work_dir="${WORK_DIR:-/tmp/fanyi-bench}"
# The mains re-exec themselves with these too (common/model/cpu_threading.h); set
# them here so that CTranslate2's Python process runs the same way.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

if ! python3 -c 'import ctranslate2, numpy' 2>/dev/null; then
  python3 -m pip install --quiet ctranslate2 numpy
fi

# shellcheck source=scripts/bench_common.sh
source scripts/bench_common.sh
build_fanyi_targets "$build_dir" fanyi-export fanyi-bench

rm -rf "$work_dir"
mkdir -p "$work_dir"
echo "== export and convert $model_dir"
"$bin/fanyi-export" --model_dir "$model_dir" --out "$work_dir/export"
python3 scripts/convert_ctranslate2.py --model_dir "$model_dir" \
  --export_dir "$work_dir/export" --out "$work_dir/ct2" --force

echo "== A, C: fanyi-bench in float32 ($threads threads, $workers worker(s))"
"$bin/fanyi-bench" --model_dir "$model_dir" --input "$sources" \
  --threads "$threads" --workers "$workers" --repeats "$repeats" \
  --batch_size "$batch" --beam_size "$beam" --reference_sentences "$reference" \
  --beam_stops_early --compute_type float32 \
  --dump_dir "$work_dir/dump" --json "$work_dir/fanyi.json"

echo "== A8: fanyi-bench in int8"
"$bin/fanyi-bench" --model_dir "$model_dir" --input "$sources" \
  --threads "$threads" --workers "$workers" --repeats "$repeats" \
  --batch_size "$batch" --beam_size "$beam" --modes greedy1,greedy,beam \
  --beam_stops_early \
  --compute_type int8 --json "$work_dir/fanyi_int8.json"

echo "== A0: fanyi-bench with LibTorch's decoding step"
"$bin/fanyi-bench" --model_dir "$model_dir" --input "$sources" \
  --threads "$threads" --workers "$workers" --repeats "$repeats" \
  --batch_size "$batch" --beam_size "$beam" --modes greedy1,greedy,beam \
  --beam_stops_early \
  --cpu_decoder libtorch --compute_type float32 \
  --json "$work_dir/fanyi_libtorch.json"

echo "== agreement: CTranslate2 greedy vs fanyi greedy"
python3 bench/check_agreement.py --ct2_model "$work_dir/ct2" \
  --model_dir "$model_dir" --dump_dir "$work_dir/dump" --threads "$threads"

for compute_type in float32 int8; do
  echo "== B: CTranslate2 $compute_type"
  python3 bench/ctranslate2_bench.py --ct2_model "$work_dir/ct2" \
    --model_dir "$model_dir" --sources "$work_dir/dump/sources.ids" \
    --threads "$threads" --workers "$workers" --repeats "$repeats" \
    --batch_size "$batch" --beam_size "$beam" --compute_type "$compute_type" \
    --json "$work_dir/ct2_$compute_type.json"
done

echo "== summary ($(nproc) cores, $(uname -m))"
python3 bench/report.py --fanyi "$work_dir/fanyi.json" \
  --fanyi_int8 "$work_dir/fanyi_int8.json" \
  --fanyi_libtorch "$work_dir/fanyi_libtorch.json" \
  --ct2 "$work_dir/ct2_float32.json" --ct2_int8 "$work_dir/ct2_int8.json"
