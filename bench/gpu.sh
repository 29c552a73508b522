#!/usr/bin/env bash
# The GPU checks of a CUDA build (scripts/build-gpu.sh) on a host with an
# NVIDIA GPU, with every log and JSON file in OUT_DIR and a summary on stdout:
#   bench/gpu.sh MODEL_DIR OUT_DIR [STEP...]
# Steps, all by default, in this order:
#   versions  the GPU, its driver and CUDA (decode prints LibTorch's)
#   tests     the test suite with CUDA visible (device_test runs each case on
#             the CPU and on CUDA), less the tests of images and linters
#   decode    fanyi-bench --device cuda: greedy at batch 1 (the first
#             DECODE1 sentences), greedy and beam 4 at batch 32 and 128,
#             without CUDA graphs and with them, interleaved over ROUNDS
#   ct2       the same in CTranslate2 on the GPU (CT2_MODEL: MODEL_DIR
#             converted by scripts/convert_ctranslate2.py; a CUDA build of
#             its Python module importable), float32, float16 and
#             int8_float16, with its greedy output's agreement with fanyi's
#   versus    fanyi (float32; float32 with greedy windows, --device_steps
#             8; float16: --compute_type) against
#             CTranslate2 float32 and float16 on this GPU (CT2_MODEL as for
#             ct2), and against an earlier fanyi build when BASE_BIN names
#             its bin/: greedy at batch 1, greedy and beam 4 at batch 32 and
#             128, each engine once per round over ROUNDS interleaved rounds,
#             medians and per-round ratios, with the greedy agreement of
#             CTranslate2 and of fanyi's float16 with fanyi's float32
#   realsize  the same as versus at the shape of Argos's and OPUS-MT's models
#             (6+6 layers, d_model 512, d_ff 2048, 8 heads; the corpus's
#             own vocabularies): trained on this GPU for REAL_MINUTES,
#             exported and converted, then REAL_ROUNDS rounds against
#             CTranslate2 (no BASE_BIN)
#   serve     bench/serve.sh on CUDA at concurrency 1, 8, 64 and 256, greedy
#             and the default beam, with the GPU memory in use
#   serve_graphs  the same at concurrency 1, 8 and 64, without CUDA graphs
#             and with them
#   train     fanyi-train --device cuda for TRAIN_MINUTES each: the default
#             recipe at its batch and at BIG_BATCH tokens (dev BLEU, tokens/s)
#   precision fanyi-train --device cuda for PRECISION_STEPS steps in float32
#             and in bfloat16 autocast (--precision bf16): dev BLEU, tokens/s
# MODEL_DIR is a checkpoint (scripts/demo.sh trains models/demo/best).
# Environment: BUILD_DIR (build-gpu), DATA_DIR (../shared/data/en-zh),
# DECODE1 (300), ROUNDS (decode: 5), DURATION (serve: seconds per run, 8),
# TRAIN_MINUTES (1.5), BIG_BATCH (16384), PRECISION_STEPS (2000), CT2_MODEL,
# BASE_BIN, REAL_MINUTES (1.5), REAL_ROUNDS (3).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 2 ]]; then
  sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
model_dir="$1"
out_dir="$2"
shift 2
steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(versions tests decode serve train)
build_dir="${BUILD_DIR:-build-gpu}"
data_dir="${DATA_DIR:-../shared/data/en-zh}"
bin="$build_dir/bin"
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
summary="$out_dir/summary.txt"
: >"$summary"

say() { echo "$*" | tee -a "$summary"; }

versions() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader |
    sed 's/^/GPU: /' | tee -a "$summary"
  nvidia-smi | sed -n 's/.*CUDA Version: \([0-9.]*\).*/driver CUDA: \1/p' |
    tee -a "$summary"
  say "nproc: $(nproc), $(uname -m)"
}

tests() {
  # Images and linters are checked on the CPU machines (CI); a GPU host has
  # neither their tools nor a browser. device_test runs on its own, for its
  # output (the attention errors).
  local status=0
  ctest --test-dir "$build_dir" -j "$(nproc)" --output-on-failure --timeout 180 \
    -E '^(deploy_lint|runtime_libraries_test|prometheus_integration|web_page_test|device_test)$' \
    >"$out_dir/ctest.log" 2>&1 || status=$?
  grep -E "tests passed|tests failed|Total Test time" "$out_dir/ctest.log" | tee -a "$summary"
  grep -E "^\s+[0-9]+ - " "$out_dir/ctest.log" | tee -a "$summary" || true
  "$build_dir/tests/device_test" >"$out_dir/device_test.log" 2>&1 || status=$?
  grep -E "^\[ +(OK|FAILED) +\]|relative error|graphs captured|replayed" "$out_dir/device_test.log" |
    tee -a "$summary"
  return "$status"
}

decode() {
  # The plain step against CUDA graphs, interleaved: on a shared GPU host
  # one run of a command lands up to 35% from the next, so each setting runs
  # once per round, ROUNDS rounds, and the median per mode is reported.
  local sources="$data_dir/dev.tsv" setting batch runs="$out_dir/decode_runs.txt"
  local log="$out_dir/decode.log"
  : >"$runs"
  : >"$log"
  for _ in $(seq "${ROUNDS:-5}"); do
    for setting in false true; do
      "$bin/fanyi-bench" --device cuda --model_dir "$model_dir" \
        --input "$sources" --cuda_graphs="$setting" --modes greedy1 \
        --max_sentences "${DECODE1:-300}" --repeats 1 2>&1 | tee -a "$log" |
        sed -n "s/^\(greedy_b1\) .* \([0-9.]*\)$/graphs=$setting \1 \2/p" >>"$runs"
      for batch in 32 128; do
        "$bin/fanyi-bench" --device cuda --model_dir "$model_dir" \
          --input "$sources" --cuda_graphs="$setting" --modes greedy,beam \
          --batch_size "$batch" --beam_size 4 --repeats 1 2>&1 | tee -a "$log" |
          sed -n "s/^\([a-z0-9_]*_b$batch\) .* \([0-9.]*\)$/graphs=$setting \1 \2/p" >>"$runs"
      done
    done
  done
  say "target tokens/s, median of ${ROUNDS:-5} interleaved runs (all runs: decode_runs.txt):"
  sort -k1,2 "$runs" | awk '
    function flush() { if (n) { m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2;
                                printf "%s %s %.0f (%d runs)\n", key1, key2, m, n } }
    { if ($1 " " $2 != key1 " " key2) { flush(); key1 = $1; key2 = $2; n = 0 }
      v[++n] = $3; for (i = n; i > 1 && v[i] < v[i - 1]; --i) { t = v[i]; v[i] = v[i - 1]; v[i - 1] = t } }
    END { flush() }' | tee -a "$summary"
  say "CUDA graphs in the last round (every round's: decode.log):"
  grep 'CUDA graphs' "$log" | tail -5 | tee -a "$summary"
}

ct2() {
  local dump="$out_dir/ct2_dump" type batch
  python3 -c 'import ctranslate2 as c; print("CTranslate2", c.__version__,
    "CUDA devices:", c.get_cuda_device_count())' 2>&1 | tee -a "$summary"
  "$bin/fanyi-bench" --device cuda --model_dir "$model_dir" \
    --input "$data_dir/dev.tsv" --modes greedy1 --repeats 1 --dump_dir "$dump" \
    >"$out_dir/ct2_dump.log" 2>&1
  for type in float32 float16 int8_float16; do
    python3 bench/check_agreement.py --device cuda --compute_type "$type" \
      --ct2_model "$CT2_MODEL" --model_dir "$model_dir" --dump_dir "$dump" \
      --min_agreement 0 --show 0 2>&1 | head -1 | tee -a "$summary"
    python3 bench/ctranslate2_bench.py --device cuda --compute_type "$type" \
      --ct2_model "$CT2_MODEL" --model_dir "$model_dir" \
      --sources "$dump/sources.ids" --modes greedy1 \
      --max_sentences "${DECODE1:-300}" --repeats 3 \
      --json "$out_dir/ct2_${type}_b1.json" 2>&1 | tee -a "$summary"
    for batch in 32 128; do
      python3 bench/ctranslate2_bench.py --device cuda --compute_type "$type" \
        --ct2_model "$CT2_MODEL" --model_dir "$model_dir" \
        --sources "$dump/sources.ids" --modes greedy,beam --batch_size "$batch" \
        --beam_size 4 --repeats 3 --json "$out_dir/ct2_${type}_b$batch.json" \
        2>&1 | tail -2 | tee -a "$summary"
    done
  done
}

# The median of the numbers on stdin.
median() {
  sort -n | awk '{ v[++n] = $1 } END { if (n) printf "%.0f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}

# ENGINE MODES BATCH: one run of ENGINE (fanyi, base or ct2_TYPE), its
# target tokens/s per mode appended to the runs file as "ROUND ENGINE MODE
# VALUE".
versus_run() {
  local engine=$1 modes=$2 batch=$3 round=$4 runs=$5 log=$6 dump=$7
  local limit=() output
  [[ $modes == greedy1 ]] && limit=(--max_sentences "${DECODE1:-300}")
  case $engine in
    fanyi | fanyi_* | base)
      local engine_bin="$bin" type=float32 windows=()
      [[ $engine == base ]] && engine_bin="$BASE_BIN"
      case $engine in
        fanyi_steps*) windows=(--device_steps "${engine#fanyi_steps}") ;;
        fanyi_*) type=${engine#fanyi_} ;;
      esac
      output=$("$engine_bin/fanyi-bench" --device cuda --model_dir "$model_dir" \
        --input "$data_dir/dev.tsv" --modes "$modes" --batch_size "$batch" \
        --beam_size 4 --repeats 1 --compute_type "$type" "${windows[@]}" \
        "${limit[@]}" 2>&1) ;;
    ct2_*)
      output=$(python3 bench/ctranslate2_bench.py --device cuda \
        --compute_type "${engine#ct2_}" --ct2_model "$CT2_MODEL" \
        --model_dir "$model_dir" --sources "$dump/sources.ids" --modes "$modes" \
        --batch_size "$batch" --beam_size 4 --repeats 1 "${limit[@]}" 2>&1) ;;
  esac
  echo "== round $round $engine $modes $batch" >>"$log"
  echo "$output" >>"$log"
  echo "$output" | awk -v r="$round" -v e="$engine" \
    '$1 ~ /^(greedy|beam[0-9]+)_b[0-9]+$/ && NF == 6 { print r, e, $1, $6 }' >>"$runs"
}

versus() {
  local dump="$out_dir/versus_dump" runs="$out_dir/versus_runs.txt"
  local log="$out_dir/versus.log" engines=(fanyi) type round engine mode
  [[ -n ${BASE_BIN:-} ]] && engines+=(base)
  engines+=(fanyi_steps8 fanyi_float16 ct2_float32 ct2_float16)
  # The ratios reported: fanyi float32 against each other engine, its greedy
  # windows against CTranslate2's float32, and fanyi float16 against
  # CTranslate2's.
  local pairs=() other
  for other in "${engines[@]:1}"; do pairs+=("fanyi:$other"); done
  pairs+=(fanyi_steps8:ct2_float32 fanyi_float16:ct2_float16)
  : >"$runs"
  : >"$log"
  python3 -c 'import ctranslate2 as c; print("CTranslate2", c.__version__,
    "CUDA devices:", c.get_cuda_device_count())' 2>&1 | tee -a "$summary"
  "$bin/fanyi-bench" --device cuda --model_dir "$model_dir" \
    --input "$data_dir/dev.tsv" --modes greedy1 --repeats 1 --dump_dir "$dump" \
    >"$out_dir/versus_dump.log" 2>&1
  # fanyi's float16 greedy output against its float32's, all sentences.
  "$bin/fanyi-bench" --device cuda --model_dir "$model_dir" --compute_type float16 \
    --input "$data_dir/dev.tsv" --modes greedy1 --repeats 1 --dump_dir "$dump/float16" \
    >"$out_dir/versus_dump_float16.log" 2>&1
  say "fanyi float16 greedy output against fanyi float32's: $(awk -F '\t' '
    FNR == NR { want[$1] = $2; next } { n++; same += ($1 in want) && want[$1] == $2 }
    END { printf "%d of %d identical (%.2f%%)", same, n, n ? 100 * same / n : 0 }' \
    "$dump/greedy_b1.ids" "$dump/float16/greedy_b1.ids")"
  for type in float32 float16; do
    python3 bench/check_agreement.py --device cuda --compute_type "$type" \
      --ct2_model "$CT2_MODEL" --model_dir "$model_dir" --dump_dir "$dump" \
      --min_agreement 0 --show 0 2>&1 | head -1 | sed "s/^/$type: /" | tee -a "$summary"
  done
  for round in $(seq "${ROUNDS:-5}"); do
    for engine in "${engines[@]}"; do
      versus_run "$engine" greedy1 1 "$round" "$runs" "$log" "$dump"
      for batch in 32 128; do
        versus_run "$engine" greedy,beam "$batch" "$round" "$runs" "$log" "$dump"
      done
    done
  done
  say "target tokens/s, median of ${ROUNDS:-5} interleaved rounds (every run: versus_runs.txt):"
  say "$(printf '%-12s' mode; printf ' %13s' "${engines[@]}"; printf ' %s' "ratios, per round")"
  awk '{ print $3 }' "$runs" | sort -u | while read -r mode; do
    local line ratios="" pair
    line=$(printf '%-12s' "$mode")
    for engine in "${engines[@]}"; do
      line+=$(printf ' %13s' "$(awk -v e="$engine" -v m="$mode" '$2 == e && $3 == m { print $4 }' "$runs" | median)")
    done
    for pair in "${pairs[@]}"; do
      ratios+=" ${pair/:/÷}:$(awk -v a="${pair%%:*}" -v b="${pair#*:}" -v m="$mode" '
        $1 > rounds { rounds = $1 }
        $3 == m && $2 == a { f[$1] = $4 } $3 == m && $2 == b { o[$1] = $4 }
        END { for (r = 1; r <= rounds; ++r) if ((r in f) && (r in o) && o[r] > 0) printf " %.2f", f[r] / o[r] }' "$runs")"
    done
    say "$line  $ratios"
  done
  say "fanyi's CUDA graphs in the last round:"
  awk '/^== round/ { engine = $4 } engine == "fanyi" && /CUDA graphs/' "$log" | tail -3 | tee -a "$summary"
}

realsize() {
  local real="$out_dir/real" model_dir="$out_dir/real/best"
  local CT2_MODEL="$out_dir/real_ct2" BASE_BIN="" ROUNDS="${REAL_ROUNDS:-3}"
  "$bin/fanyi-train" --device cuda --train "$data_dir/train.tsv" \
    --dev "$data_dir/dev.tsv" --out "$real" --layers 6 --d_model 512 \
    --d_ff 2048 --heads 8 --batch_tokens 8192 --warmup 400 \
    --max_minutes "${REAL_MINUTES:-1.5}" >"$out_dir/real_train.log" 2>&1 || return 1
  say "real size: $(grep -E 'best dev BLEU|averaged' "$out_dir/real_train.log" | tail -2 | tr '\n' ' ')"
  "$bin/fanyi-export" --model_dir "$model_dir" --out "$out_dir/real_export" \
    >"$out_dir/real_export.log" 2>&1 || return 1
  python3 scripts/convert_ctranslate2.py --model_dir "$model_dir" \
    --export_dir "$out_dir/real_export" --out "$CT2_MODEL" 2>&1 | tail -1 | tee -a "$summary"
  versus
}

serve() {
  local beam memory_log
  for beam in 1 4; do
    local name="serve_beam$beam${SERVE_TAG:-}"
    memory_log="$out_dir/$name.memory"
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 \
      >"$memory_log" &
    local sampler=$!
    BIN_DIR="$bin" DEVICE=cuda \
      CONCURRENCIES="${SERVE_CONCURRENCIES:-1 8 64 256}" \
      DURATION="${DURATION:-8}" REPEATS=1 MIXED=0 \
      SERVER_FLAGS="--beam_size $beam --max_batch_size 256 ${SERVE_FLAGS:-}" \
      WORK_DIR="$out_dir/$name" \
      bash bench/serve.sh "$model_dir" "$data_dir/dev.tsv" 2>&1 |
      tee "$out_dir/$name.log" | sed -n '/== summary/,$p' | tee -a "$summary"
    kill "$sampler" 2>/dev/null || true
    say "$name: server log: $(grep -c 'decoding failed' \
      "$out_dir/$name/server.log") decoding failures"
    say "$name: GPU memory used, MiB: $(sort -n "$memory_log" | head -1) idle," \
      "$(sort -n "$memory_log" | tail -1) at most"
  done
}

serve_graphs() {
  # The server without CUDA graphs, then with them (its default), where
  # launches weigh most: concurrency 1, 8 and 64.
  local graphs status=0
  for graphs in false true; do
    say "--cuda_graphs=$graphs"
    SERVE_TAG="_graphs_$graphs" SERVE_FLAGS="--cuda_graphs=$graphs" \
      SERVE_CONCURRENCIES="1 8 64" serve || status=1
  done
  return "$status"
}

# fanyi-train --device cuda on the corpus into OUT_DIR/NAME, plus FLAGS;
# says its last validation.
train_run() {
  local name=$1
  shift
  "$bin/fanyi-train" --device cuda --train "$data_dir/train.tsv" \
    --dev "$data_dir/dev.tsv" --out "$out_dir/$name" "$@" \
    >"$out_dir/$name.log" 2>&1
  cp "$out_dir/$name/train_log.jsonl" "$out_dir/$name.jsonl"
  say "$name ($*): $(grep '"event":"epoch"' "$out_dir/$name.jsonl" | tail -1)"
  say "$name: $(grep -E 'best dev BLEU|averaged' "$out_dir/$name.log" | tail -2 |
    tr '\n' ' ')"
}

train() {
  local minutes="${TRAIN_MINUTES:-1.5}"
  train_run train_default --batch_tokens 2048 --max_minutes "$minutes"
  train_run train_big --batch_tokens "${BIG_BATCH:-16384}" --max_minutes "$minutes"
}

precision() {
  local name
  for name in fp32 bf16; do
    train_run "precision_$name" --precision "$name" \
      --max_steps "${PRECISION_STEPS:-2000}"
  done
}

failed=()
for step in "${steps[@]}"; do
  say "== $step ($(date -u +%H:%M:%S))"
  "$step" || failed+=("$step")
done
say "== done ($(date -u +%H:%M:%S)); failed steps: ${failed[*]:-none}"
[[ ${#failed[@]} -eq 0 ]]
