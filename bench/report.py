#!/usr/bin/env python3
"""Prints fanyi (A) against CTranslate2 (B) and the no-cache decoder (C).

Reads the --json files of fanyi-bench and bench/ctranslate2_bench.py and
prints one Markdown table. Ratios are of target tokens per second (A÷B < 1:
fanyi is slower than CTranslate2; A÷C: speed-up over the reference decoder).
Tokens per second is the rate compared because C decodes only a subset of
the sentences.
"""

import argparse
import json
import sys


def by_name(results):
    return {mode["name"]: mode for mode in results["modes"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fanyi", required=True, help="fanyi-bench --json")
    parser.add_argument("--ct2", required=True, help="ctranslate2_bench.py --json")
    args = parser.parse_args()
    with open(args.fanyi, encoding="utf-8") as file:
        fanyi = json.load(file)
    with open(args.ct2, encoding="utf-8") as file:
        ct2 = json.load(file)
    a, b = by_name(fanyi), by_name(ct2)
    c = a.get("reference_b1")

    print(
        "fanyi: LibTorch %s, %d threads | CTranslate2 %s, %s, intra_threads %d, "
        "inter_threads %d | %d sources, medians of %d runs"
        % (
            fanyi["libtorch"],
            fanyi["threads"],
            ct2["ctranslate2"],
            ct2["compute_type"],
            ct2["intra_threads"],
            ct2["inter_threads"],
            fanyi["sources"],
            fanyi["repeats"],
        )
    )
    print()
    print(
        "| mode | A fanyi sent/s | A tok/s | B CT2 sent/s | B tok/s | A÷B | A÷C |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, mode in a.items():
        if name == "reference_b1":
            continue
        other = b.get(name)
        rate = mode["target_tokens_per_second"]
        row = [
            name,
            "%.1f" % mode["sentences_per_second"],
            "%.1f" % mode["target_tokens_per_second"],
            "%.1f" % other["sentences_per_second"] if other else "-",
            "%.1f" % other["target_tokens_per_second"] if other else "-",
            "%.2f" % (rate / other["target_tokens_per_second"]) if other else "-",
            "%.1f" % (rate / c["target_tokens_per_second"]) if c else "-",
        ]
        print("| " + " | ".join(row) + " |")
    if c:
        print(
            "| C: reference_b1 (no cache, first %d sentences) | %.1f | %.1f | | | | 1.0 |"
            % (c["sentences"], c["sentences_per_second"], c["target_tokens_per_second"])
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
