#!/usr/bin/env python3
"""Prints fanyi (A, A8) against CTranslate2 (B, B8) and the no-cache decoder (C).

Reads the --json files of fanyi-bench and bench/ctranslate2_bench.py and
prints one Markdown table of target tokens per second (sentences per second
in brackets). A is fanyi as it ships (the packed decoding step on the CPU,
float32); A8, when given, the same step in int8 (--compute_type int8); A0
fanyi with LibTorch's own step; B is CTranslate2 float32, B8 CTranslate2
int8. Ratios are of target tokens per second, float32 against float32 and
int8 against int8 (A÷B < 1: fanyi is slower than CTranslate2; A÷C: speed-up
over the reference decoder).
Tokens per second is the rate compared because C decodes only a subset of
the sentences.
"""

import argparse
import json
import sys


def by_name(results):
    return {mode["name"]: mode for mode in results["modes"]}


def load(path):
    if not path:
        return None
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def rate(mode):
    return "%.0f (%.0f)" % (
        mode["target_tokens_per_second"],
        mode["sentences_per_second"],
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fanyi", required=True, help="fanyi-bench --json")
    parser.add_argument(
        "--fanyi_libtorch", help="fanyi-bench --cpu_decoder libtorch --json"
    )
    parser.add_argument("--ct2", required=True, help="ctranslate2_bench.py --json")
    parser.add_argument("--ct2_int8", help="the same with --compute_type int8")
    parser.add_argument("--fanyi_int8", help="fanyi-bench --compute_type int8 --json")
    args = parser.parse_args()
    fanyi, ct2 = load(args.fanyi), load(args.ct2)
    libtorch, ct2_int8 = load(args.fanyi_libtorch), load(args.ct2_int8)
    fanyi_int8 = load(args.fanyi_int8)
    a, b = by_name(fanyi), by_name(ct2)
    a8 = by_name(fanyi_int8) if fanyi_int8 else {}
    a0 = by_name(libtorch) if libtorch else {}
    b8 = by_name(ct2_int8) if ct2_int8 else {}
    c = a.get("reference_b1")

    print(
        "fanyi: LibTorch %s, %d threads | CTranslate2 %s, intra_threads %d, "
        "inter_threads %d | %d sources, medians of %d runs"
        % (
            fanyi["libtorch"],
            fanyi["threads"],
            ct2["ctranslate2"],
            ct2["intra_threads"],
            ct2["inter_threads"],
            fanyi["sources"],
            fanyi["repeats"],
        )
    )
    print()
    print(
        "target tokens/s (sentences/s) | A fanyi float32 | A8 fanyi int8 | "
        "A0 fanyi, LibTorch step | B CT2 float32 | B8 CT2 int8"
    )
    print()
    print("| mode | A | A8 | A0 | B | B8 | A÷B | A8÷B8 | A÷A0 | A÷C |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def ratio(mode, other):
        if not mode or not other:
            return "-"
        return "%.2f" % (
            mode["target_tokens_per_second"] / other["target_tokens_per_second"]
        )

    for name, mode in a.items():
        if name == "reference_b1":
            continue
        tokens = mode["target_tokens_per_second"]
        row = [
            name,
            rate(mode),
            rate(a8[name]) if name in a8 else "-",
            rate(a0[name]) if name in a0 else "-",
            rate(b[name]) if name in b else "-",
            rate(b8[name]) if name in b8 else "-",
            ratio(mode, b.get(name)),
            ratio(a8.get(name), b8.get(name)),
            ratio(mode, a0.get(name)),
            "%.1f" % (tokens / c["target_tokens_per_second"]) if c else "-",
        ]
        print("| " + " | ".join(row) + " |")
    if c:
        print(
            "| C: reference_b1 (no cache, first %d sentences) | %s | | | | | | | | 1.0 |"
            % (c["sentences"], rate(c))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
