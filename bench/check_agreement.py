#!/usr/bin/env python3
"""Checks that a converted CTranslate2 model decodes like fanyi.

Reads what `fanyi-bench --dump_dir DIR` wrote (sources.ids: the sources as
fanyi's tokenizer and vocabulary turned them into ids; greedy_b1.ids: fanyi's
greedy output for each), translates the same ids with CTranslate2's greedy
search and compares the target id sequences exactly:

  python3 bench/check_agreement.py --ct2_model /tmp/en-zh-ct2 \
      --model_dir models/en-zh --dump_dir /tmp/bench-dump

Length limit: fanyi lets each row generate at most
min(max_length, floor(2 * source_len) + 10) tokens (common/decoding/greedy_decoder.h,
MaxTargetLength; max_length = min(256, max_positions - 1)), while
CTranslate2's max_decoding_length is one number per translate_batch call. So
sources are grouped by length (every row of a group then has the same limit)
and each group is translated with max_decoding_length set to that limit:
the per-row rule is matched exactly, with no truncation after the fact.

Exits with status 1 when fewer than --min_agreement of the sentences agree.
"""

import argparse
import itertools
import json
import math
import os
import sys

import ctranslate2

DEFAULT_MAX_DECODE_LENGTH = 256  # TranslatorOptions::max_decode_length.
LENGTH_RATIO = 2.0  # DecodingOptions::length_ratio.
LENGTH_OFFSET = 10  # DecodingOptions::length_offset.


def read_id_lines(path):
    """{input line: [ids]} from a "LINE<TAB>id id ..." file of fanyi-bench."""
    rows = {}
    with open(path, encoding="utf-8") as file:
        for text in file:
            line, _, ids = text.rstrip("\n").partition("\t")
            rows[int(line)] = [int(token) for token in ids.split()]
    return rows


def resolve_model_dir(model_dir):
    if not os.path.isfile(os.path.join(model_dir, "config.json")):
        return os.path.join(model_dir, "best")  # A training output directory.
    return model_dir


def load_tokens(model_dir, name):
    with open(os.path.join(model_dir, name), encoding="utf-8") as file:
        return json.load(file)["tokens"]


def max_target_length(source_length, max_length):
    """fanyi's MaxTargetLength with the Translator's default options."""
    scaled = int(math.floor(LENGTH_RATIO * source_length)) + LENGTH_OFFSET
    return max(1, min(max_length, scaled))


class Fanyi:
    """The fanyi checkpoint's vocabularies and decoding limits."""

    def __init__(self, model_dir):
        model_dir = resolve_model_dir(model_dir)
        self.source_tokens = load_tokens(model_dir, "src_vocab.json")
        self.target_tokens = load_tokens(model_dir, "tgt_vocab.json")
        self.target_ids = {t: i for i, t in enumerate(self.target_tokens)}
        with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        max_positions = config["model"]["max_positions"]
        # The α the model's beam search decodes with (1.0 before the field).
        self.length_penalty = config.get("length_penalty", 1.0)
        # Translator::FromCheckpoint: the position table bounds the decoder.
        self.max_length = min(DEFAULT_MAX_DECODE_LENGTH, max_positions - 1)

    def limit(self, source_ids):
        return max_target_length(len(source_ids), self.max_length)

    def source_tokens_of(self, ids):
        # Tokens, not ids, are what translate_batch takes; <unk> stays <unk>.
        return [self.source_tokens[i] for i in ids]

    def target_ids_of(self, tokens):
        return [self.target_ids[t] for t in tokens]


def translate(translator, fanyi, sources, max_decoding_length, **options):
    """Target ids for `sources` (id lists) from one translate_batch call."""
    results = translator.translate_batch(
        [fanyi.source_tokens_of(ids) for ids in sources],
        max_decoding_length=max_decoding_length,
        # CTranslate2's default of 1 forbids </s> as the first token; fanyi
        # allows an empty translation.
        min_decoding_length=0,
        max_input_length=0,
        **options,
    )
    return [fanyi.target_ids_of(r.hypotheses[0]) for r in results]


def greedy_exact_limits(translator, fanyi, sources, batch_size):
    """CTranslate2 greedy output per line, each row under its own limit."""
    outputs = {}
    by_length = sorted(sources.items(), key=lambda item: len(item[1]))
    for _, group in itertools.groupby(by_length, key=lambda item: len(item[1])):
        group = list(group)
        for begin in range(0, len(group), batch_size):
            chunk = group[begin : begin + batch_size]
            ids = [source for _, source in chunk]
            targets = translate(
                translator, fanyi, ids, fanyi.limit(ids[0]), beam_size=1
            )
            for (line, _), target in zip(chunk, targets):
                outputs[line] = target
    return outputs


def first_difference(a, b):
    for position, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return position
    return min(len(a), len(b))


def compare(name, reference, candidate, fanyi, show):
    lines = sorted(set(reference) & set(candidate))
    differing = [line for line in lines if reference[line] != candidate[line]]
    share = 1 - len(differing) / len(lines) if lines else 0.0
    print(
        "%-28s %5d / %5d sentences identical (%.2f%%)"
        % (name, len(lines) - len(differing), len(lines), 100 * share)
    )
    for line in differing[:show]:
        position = first_difference(reference[line], candidate[line])
        print(
            "  line %d: first difference at target position %d "
            "(lengths %d vs %d): %s | %s"
            % (
                line,
                position,
                len(reference[line]),
                len(candidate[line]),
                "".join(fanyi.target_tokens[i] for i in reference[line]),
                "".join(fanyi.target_tokens[i] for i in candidate[line]),
            )
        )
    return share


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ct2_model", required=True)
    parser.add_argument("--model_dir", required=True, help="fanyi checkpoint")
    parser.add_argument("--dump_dir", required=True, help="fanyi-bench --dump_dir")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--min_agreement", type=float, default=0.99)
    parser.add_argument("--show", type=int, default=5, help="differences to print")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument(
        "--compute_type", default="float32", help="CTranslate2's (float16 on a GPU)"
    )
    args = parser.parse_args()

    fanyi = Fanyi(args.model_dir)
    sources = read_id_lines(os.path.join(args.dump_dir, "sources.ids"))
    fanyi_greedy = read_id_lines(os.path.join(args.dump_dir, "greedy_b1.ids"))
    translator = ctranslate2.Translator(
        args.ct2_model,
        device=args.device,
        compute_type=args.compute_type,
        intra_threads=args.threads,
        inter_threads=1,
    )
    ct2_greedy = greedy_exact_limits(translator, fanyi, sources, args.batch_size)

    share = compare(
        "CTranslate2 %s vs fanyi greedy" % args.compute_type,
        fanyi_greedy,
        ct2_greedy,
        fanyi,
        args.show,
    )
    # fanyi against itself, for scale: batching and the cache-free decoder
    # change float rounding too.
    for name in sorted(os.listdir(args.dump_dir)):
        if name.endswith(".ids") and name not in ("sources.ids", "greedy_b1.ids"):
            other = read_id_lines(os.path.join(args.dump_dir, name))
            compare("fanyi %s vs greedy_b1" % name[:-4], fanyi_greedy, other,
                    fanyi, 0)
    if share < args.min_agreement:
        print(
            "check_agreement.py: agreement %.2f%% is below %.2f%%"
            % (100 * share, 100 * args.min_agreement)
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
