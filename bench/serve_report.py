#!/usr/bin/env python3
"""Summarises the fanyi-loadgen reports that bench/serve.sh writes.

closed-c<C>-<run>.json: closed loop at concurrency C; open-<run>.json: open
loop; mixed-greedy-<run>.json and mixed-beam-<run>.json: the two halves of a
mixed closed loop. Prints a Markdown table (the run with the median throughput of each
setting), throughput at the highest concurrency over concurrency 1, and
p99 / p50 of the open-loop runs. With --open_rate, prints only the offered
rate for the open loop instead: --open_fraction of the best closed-loop
sentences/s.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys


def load(directory, pattern):
    runs = {}
    for path in glob.glob(os.path.join(directory, "*.json")):
        match = re.fullmatch(pattern, os.path.basename(path))
        if match:
            with open(path) as f:
                runs.setdefault(match.group(1), []).append(json.load(f))
    return runs


def median_run(runs):
    ordered = sorted(runs, key=lambda r: r["sentences_per_second"])
    return ordered[(len(ordered) - 1) // 2]


def row(label, run):
    latency = run["latency_ms"]
    errors = sum(n for code, n in run["status_counts"].items() if code != "OK")
    return (f"| {label} | {run['requests_completed']} | {errors} | "
            f"{run['sentences_per_second']:.1f} | "
            f"{run['generated_tokens_per_second']:.0f} | "
            f"{latency['p50']:.1f} | {latency['p90']:.1f} | "
            f"{latency['p99']:.1f} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--open_rate", action="store_true")
    parser.add_argument("--open_fraction", type=float, default=0.5)
    args = parser.parse_args()

    closed = load(args.dir, r"closed-c(\d+)-\d+\.json")
    if not closed:
        sys.exit(f"no closed-loop reports in {args.dir}")
    best = max(median_run(runs)["sentences_per_second"]
               for runs in closed.values())
    if args.open_rate:
        print(f"{best * args.open_fraction:.0f}")
        return

    print("| load | requests | errors | sentences/s | tokens/s | "
          "p50 ms | p90 ms | p99 ms |")
    print("|---|---|---|---|---|---|---|---|")
    concurrencies = sorted(closed, key=int)
    for concurrency in concurrencies:
        print(row(f"closed, concurrency {concurrency}",
                  median_run(closed[concurrency])))
    open_runs = load(args.dir, r"open-(\d+)\.json")
    ratios = []
    for name in sorted(open_runs, key=int):
        run = open_runs[name][0]
        print(row(f"open, {run['offered_rate']:.0f} requests/s (run {name})",
                  run))
        if run["latency_ms"]["p50"] > 0:  # 0 when every request failed.
            ratios.append(run["latency_ms"]["p99"] / run["latency_ms"]["p50"])
    mixed = load(args.dir, r"mixed-(greedy|beam)-\d+\.json")
    for kind in ("greedy", "beam"):
        if kind in mixed:
            run = median_run(mixed[kind])
            print(row(f"mixed, {run['concurrency']} {kind} clients", run))
    print()
    low, high = concurrencies[0], concurrencies[-1]
    low_throughput = median_run(closed[low])["sentences_per_second"]
    if low_throughput > 0:
        ratio = median_run(closed[high])["sentences_per_second"] / low_throughput
        print(f"throughput, concurrency {high} / concurrency {low}: "
              f"{ratio:.1f}x")
    if ratios:
        print(f"open loop p99 / p50: median {statistics.median(ratios):.2f} "
              f"(runs: {', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
