#!/usr/bin/env python3
"""Times a converted fanyi model in CTranslate2, as fanyi-bench times fanyi.

Decodes the sources that `fanyi-bench --dump_dir DIR` wrote (sources.ids: the
ids fanyi's tokenizer produced, so neither side times tokenization) in the
same modes (--modes, as fanyi-bench's): greedy at batch 1 (greedy1), greedy
and beam search at --batch_size over length-sorted batches; medians of
--repeats runs after one warm-up batch, on the CPU or a GPU (--device):

  python3 bench/ctranslate2_bench.py --ct2_model /tmp/en-zh-ct2 \
      --model_dir models/en-zh --sources /tmp/bench-dump/sources.ids \
      --threads 2 --json /tmp/ct2.json

Length limit: fanyi stops each row at its own limit
min(max_length, floor(2 * source_len) + 10); CTranslate2's
max_decoding_length is per call. At batch 1 it is set to the row's limit
(exact). For a batch it is set to the largest limit of the batch and each
row is cut back to its own limit afterwards; batches are length-sorted, so
the limits of a batch are close and the extra steps are few. Output token
counts are those after the cut, so they match fanyi's rule.
"""

import argparse
import json
import statistics
import sys
import time

import ctranslate2

from check_agreement import Fanyi, read_id_lines


def make_batches(sources, batch_size):
    """Length-sorted batches of source id lists, as fanyi-bench makes them."""
    ordered = sorted(sources, key=len)  # sorted() is stable, like fanyi's.
    return [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]


def start_decode(translator, batch_tokens, limits, beam_size, length_penalty):
    """Starts one batch on the translator's workers; returns its results'
    futures (AsyncTranslationResult), one per row."""
    return translator.translate_batch(
        batch_tokens,
        beam_size=beam_size,
        length_penalty=length_penalty,
        max_decoding_length=max(limits),
        min_decoding_length=0,  # fanyi allows </s> first.
        max_input_length=0,
        asynchronous=True,
    )


def lengths_of(futures, limits):
    """Output lengths of one started batch, each cut to its row's limit."""
    return [
        min(len(future.result().hypotheses[0]), limit)
        for future, limit in zip(futures, limits)
    ]


def decode_all(translator, prepared, beam_size, length_penalty, workers):
    """Output lengths of every batch. With several workers (inter_threads),
    up to `workers` batches run at once, as fanyi-bench's streams take the
    next batch when they finish one."""
    started = []
    lengths = []
    for tokens, limits in prepared:
        started.append(
            (start_decode(translator, tokens, limits, beam_size, length_penalty), limits)
        )
        if len(started) >= workers:
            lengths.append(lengths_of(*started.pop(0)))
    lengths.extend(lengths_of(*batch) for batch in started)
    return lengths


def time_mode(translator, fanyi, sources, name, batch_size, beam_size, args):
    batches = make_batches(sources, batch_size)
    # Tokens and limits are prepared outside the timed loop: fanyi-bench's
    # timing starts from ids too.
    prepared = [
        (
            [fanyi.source_tokens_of(ids) for ids in batch],
            [fanyi.limit(ids) for ids in batch],
        )
        for batch in batches
    ]
    decode_all(translator, prepared[:1], beam_size, args.length_penalty, 1)  # warm-up
    seconds = []
    tokens = 0
    for _ in range(args.repeats):
        start = time.perf_counter()
        lengths = decode_all(
            translator, prepared, beam_size, args.length_penalty, args.workers
        )
        seconds.append(time.perf_counter() - start)
        tokens = sum(sum(batch) for batch in lengths)
    median = statistics.median(seconds)
    result = {
        "name": name,
        "batch_size": batch_size,
        "beam_size": beam_size,
        "sentences": len(sources),
        "target_tokens": tokens,
        "seconds": seconds,
        "median_seconds": median,
        "sentences_per_second": len(sources) / median,
        "target_tokens_per_second": tokens / median,
    }
    print(
        "%-14s %9d %9d %10.3f %12.1f %14.1f"
        % (
            name,
            len(sources),
            tokens,
            median,
            result["sentences_per_second"],
            result["target_tokens_per_second"],
        ),
        flush=True,
    )
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ct2_model", required=True)
    parser.add_argument("--model_dir", required=True, help="fanyi checkpoint")
    parser.add_argument("--sources", required=True, help="sources.ids of fanyi-bench")
    parser.add_argument(
        "--threads", type=int, default=2, help="CPU threads, split over --workers"
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="inter_threads: batches run at once"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument(
        "--modes",
        default="greedy1,greedy,beam",
        help="greedy1 (batch 1), greedy and beam (at --batch_size)",
    )
    parser.add_argument(
        "--max_sentences", type=int, default=0, help="the first N sources; 0: all"
    )
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--beam_size", type=int, default=4)
    # CTranslate2 applies the GNMT penalty ((5 + len) / 6)^α, as fanyi does.
    parser.add_argument(
        "--length_penalty", type=float, help="default: the fanyi model's own α"
    )
    parser.add_argument(
        "--compute_type",
        default="float32",
        choices=["float32", "int8", "float16", "bfloat16", "int8_float16"],
        help="int8: weights quantized per output channel, int8 products; "
        "float16, bfloat16 and int8_float16 on a GPU",
    )
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    fanyi = Fanyi(args.model_dir)
    if args.length_penalty is None:
        args.length_penalty = fanyi.length_penalty
    sources = list(read_id_lines(args.sources).values())
    if args.max_sentences > 0:
        sources = sources[: args.max_sentences]
    intra_threads = max(1, args.threads // args.workers)
    translator = ctranslate2.Translator(
        args.ct2_model,
        device=args.device,
        compute_type=args.compute_type,
        intra_threads=intra_threads,
        inter_threads=args.workers,
    )
    print(
        "CTranslate2 %s on %s, compute_type %s, intra_threads %d, "
        "inter_threads %d, %d sources, median of %d runs"
        % (
            ctranslate2.__version__,
            args.device,
            args.compute_type,
            intra_threads,
            args.workers,
            len(sources),
            args.repeats,
        )
    )
    print(
        "%-14s %9s %9s %10s %12s %14s"
        % ("mode", "sentences", "tokens", "median s", "sentences/s", "tgt tokens/s")
    )
    b, k = args.batch_size, args.beam_size
    runs = {
        "greedy1": ("greedy_b1", 1, 1),
        "greedy": ("greedy_b%d" % b, b, 1),
        "beam": ("beam%d_b%d" % (k, b), b, k),
    }
    modes = []
    for mode in args.modes.split(","):
        if mode not in runs:
            parser.error("unknown mode %r (greedy1, greedy, beam)" % mode)
        modes.append(time_mode(translator, fanyi, sources, *runs[mode], args))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(
                {
                    "engine": "ctranslate2",
                    "device": args.device,
                    "ctranslate2": ctranslate2.__version__,
                    "compute_type": args.compute_type,
                    "intra_threads": intra_threads,
                    "inter_threads": args.workers,
                    "repeats": args.repeats,
                    "length_penalty": args.length_penalty,
                    "sources": len(sources),
                    "modes": modes,
                },
                file,
                indent=2,
            )
            file.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
