"""Summarizes bench/serve_http.sh: medians of each configuration's runs.

Usage: python3 bench/serve_http_report.py WORK_DIR
Reads WORK_DIR/NAME-RUN.json (fanyi-loadgen --json reports) and prints, per
configuration, the median requests/s, p50 and p99 latency over its runs, and
each ratio the benchmark is about: HTTP's throughput as a share of gRPC's at
the same concurrency, and HTML posts' as a share of the same posts as text.
"""
import collections
import json
import pathlib
import re
import statistics
import sys


def main():
    work_dir = pathlib.Path(sys.argv[1])
    runs = collections.defaultdict(list)
    for path in sorted(work_dir.glob("*.json")):
        name = re.sub(r"-\d+$", "", path.stem)
        runs[name].append(json.loads(path.read_text()))
    medians = {}
    print("| configuration | runs | requests/s (median) | each run | p50 ms | p99 ms |")
    print("|---|---:|---:|---|---:|---:|")
    for name, reports in sorted(runs.items()):
        rates = [r["requests_per_second"] for r in reports]
        p50 = statistics.median(r["latency_ms"]["p50"] for r in reports)
        p99 = statistics.median(r["latency_ms"]["p99"] for r in reports)
        failed = sum(r["requests_completed"] - r["ok_requests"] for r in reports)
        medians[name] = statistics.median(rates)
        print(f"| {name} | {len(reports)} | {medians[name]:.1f} | "
              f"{', '.join(f'{x:.1f}' for x in rates)} | {p50:.2f} | {p99:.2f} |"
              + (f" ({failed} failed)" if failed else ""))
    print()
    for name in sorted(medians):
        match = re.fullmatch(r"http-(c\d+)", name)
        if match and f"grpc-{match[1]}" in medians:
            share = medians[name] / medians[f"grpc-{match[1]}"]
            print(f"HTTP / gRPC at {match[1]}: {share:.3f}")
    if "posts-html" in medians and "posts-text" in medians:
        print(f"HTML / text posts: "
              f"{medians['posts-html'] / medians['posts-text']:.3f}")


if __name__ == "__main__":
    main()
