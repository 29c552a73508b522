#!/usr/bin/env python3
"""Times fanyi against CTranslate2 on one CTranslate2 model directory, from
source pieces to target pieces, with every translation exactly --length
tokens long (min_decoding_length = max_decoding_length on both sides), so
both engines do the same work whatever the weights:

  python3 bench/pieces_versus.py --fanyi_eval build/bin/fanyi-eval \\
      --models DIR --sources pieces.txt --json out.json

DIR holds float32/ and int8/ (bench/argos_shape.py writes them). Each run is
a whole process, fanyi-eval --tokens or this script with --engine ct2,
under /usr/bin/time for its peak resident memory; the two engines alternate
run by run, --repeats times, and the decoding seconds each reports are
taken at their median. Modes: greedy at batch 1 (the first --batch1
sentences), greedy and beam 4 at batch 32, in input order; at each of
--thread_counts (1,2); in each of --compute_types: int8 (CTranslate2's own
int8 weights, as Argos ships them) and float32. Also reports how many float32 translations are the same on both
sides.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODES = (("greedy1", 1, 1), ("greedy", 1, 32), ("beam", 4, 32))


def ct2_child(args):
    """One CTranslate2 run: decodes and prints its seconds as JSON."""
    import ctranslate2

    with open(args.sources, encoding="utf-8") as lines:
        sources = [line.split() for line in lines]
    translator = ctranslate2.Translator(
        args.model,
        device="cpu",
        compute_type=args.compute_type,
        intra_threads=args.threads,
        inter_threads=1,
    )
    fixed = dict(min_decoding_length=args.length, max_decoding_length=args.length)
    start = time.perf_counter()
    outputs = []
    for first in range(0, len(sources), args.batch_size):
        batch = sources[first : first + args.batch_size]
        results = translator.translate_batch(
            batch, beam_size=args.beam_size, max_batch_size=0, **fixed
        )
        outputs += [" ".join(result.hypotheses[0]) for result in results]
    seconds = time.perf_counter() - start
    with open(args.output, "w", encoding="utf-8") as out:
        out.write("\n".join(outputs) + "\n")
    print(json.dumps({"seconds": seconds}))


def timed(command):
    """Runs `command` under /usr/bin/time; its stdout and peak RSS (MiB)."""
    with tempfile.NamedTemporaryFile("r") as rss:
        result = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", rss.name] + command,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            sys.exit("failed: %s\n%s" % (" ".join(command), result.stderr))
        return result.stdout, int(rss.read().split()[-1]) / 1024


def run_fanyi(args, model, sources, output, compute_type, threads, beam, batch):
    stdout, rss = timed(
        [
            args.fanyi_eval,
            "--model_dir", model,
            "--tokens",
            "--input", sources,
            "--output", output,
            "--compute_type", compute_type,
            "--threads", str(threads),
            "--beam_size", str(beam),
            "--batch_size", str(batch),
            "--min_decoding_length", str(args.length),
            "--max_decoding_length", str(args.length),
        ]
    )
    # "... batch 32, 1.234 s, 5678 target tokens/s"
    seconds = float(stdout.rsplit(" s, ", 1)[0].rsplit(", ", 1)[1])
    return seconds, rss


def run_ct2(args, model, sources, output, compute_type, threads, beam, batch):
    stdout, rss = timed(
        [
            sys.executable, os.path.abspath(__file__),
            "--engine", "ct2",
            "--model", model,
            "--sources", sources,
            "--output", output,
            "--compute_type", compute_type,
            "--threads", str(threads),
            "--beam_size", str(beam),
            "--batch_size", str(batch),
            "--length", str(args.length),
        ]
    )
    return json.loads(stdout.strip().splitlines()[-1])["seconds"], rss


def same_lines(a, b):
    with open(a, encoding="utf-8") as x, open(b, encoding="utf-8") as y:
        pairs = list(zip(x.read().splitlines(), y.read().splitlines()))
    return sum(p == q for p, q in pairs), len(pairs)


def drive(args):
    work = tempfile.mkdtemp(prefix="pieces-versus-")
    with open(args.sources, encoding="utf-8") as lines:
        sources = lines.read().splitlines()
    first = os.path.join(work, "batch1.txt")
    with open(first, "w", encoding="utf-8") as out:
        out.write("\n".join(sources[: args.batch1]) + "\n")
    rows = []
    for compute_type in args.compute_types.split(","):
        model = os.path.join(args.models, compute_type)
        for threads in [int(t) for t in args.thread_counts.split(",")]:
            for mode, beam, batch in MODES:
                input_file = first if mode == "greedy1" else args.sources
                count = args.batch1 if mode == "greedy1" else len(sources)
                runs = {"fanyi": [], "ct2": []}
                memory = {"fanyi": [], "ct2": []}
                outputs = {}
                for repeat in range(args.repeats):
                    for engine, run in (("fanyi", run_fanyi), ("ct2", run_ct2)):
                        outputs[engine] = os.path.join(work, engine + ".out")
                        seconds, rss = run(
                            args, model, input_file, outputs[engine],
                            compute_type, threads, beam, batch,
                        )
                        runs[engine].append(seconds)
                        memory[engine].append(rss)
                same, total = same_lines(outputs["fanyi"], outputs["ct2"])
                tokens = count * args.length
                row = {
                    "compute_type": compute_type,
                    "threads": threads,
                    "mode": mode,
                    "sentences": count,
                    "fanyi_tokens_per_s": tokens / statistics.median(runs["fanyi"]),
                    "ct2_tokens_per_s": tokens / statistics.median(runs["ct2"]),
                    "fanyi_rss_mib": statistics.median(memory["fanyi"]),
                    "ct2_rss_mib": statistics.median(memory["ct2"]),
                    "same_translations": same,
                    "translations": total,
                }
                row["ratio"] = row["fanyi_tokens_per_s"] / row["ct2_tokens_per_s"]
                rows.append(row)
                print(
                    "%-7s %d thread(s) %-7s fanyi %8.1f  CTranslate2 %8.1f "
                    "tokens/s  x%.2f  RSS %5.0f / %5.0f MiB  same %d/%d"
                    % (
                        compute_type, threads, mode,
                        row["fanyi_tokens_per_s"], row["ct2_tokens_per_s"],
                        row["ratio"], row["fanyi_rss_mib"], row["ct2_rss_mib"],
                        same, total,
                    ),
                    flush=True,
                )
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=("drive", "ct2"), default="drive")
    parser.add_argument("--fanyi_eval")
    parser.add_argument("--models")
    parser.add_argument("--model")
    parser.add_argument("--sources", required=True)
    parser.add_argument("--output")
    parser.add_argument("--compute_type", default="int8")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--beam_size", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--length", type=int, default=30)
    parser.add_argument("--batch1", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json")
    parser.add_argument("--compute_types", default="int8,float32")
    parser.add_argument("--thread_counts", default="1,2")
    args = parser.parse_args()
    if args.engine == "ct2":
        ct2_child(args)
    else:
        drive(args)


if __name__ == "__main__":
    main()
