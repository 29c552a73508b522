#!/usr/bin/env python3
"""Measures how fanyi translates real text (docs/quality.md, issue: real text).

For one model, with fanyi-eval (the server's own text path: sentences,
clauses, placeholders, Simplified script):
  - dev BLEU against references in Simplified script and as written, and
    how many translations mix scripts;
  - paragraphs of 2-6 consecutive dev sentences translated whole, against
    the same sentences translated one by one and joined (corpus BLEU of
    both against the joined references, in Simplified script);
  - the share of verbatim.tsv sentences whose numbers, times, prices,
    addresses, URLs and codes all come through as written.

  python3 bench/real_text/measure.py --model models/realtext [--bin build/bin]

Needs sacrebleu (pip) and the opencc command (Debian's opencc package).
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

import sacrebleu

HERE = os.path.dirname(os.path.abspath(__file__))


def read_tsv(path):
    pairs = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            columns = line.rstrip('\n').rstrip('\r').split('\t')
            if len(columns) >= 2 and columns[0].strip() and columns[1].strip():
                pairs.append((columns[0].strip(), columns[1].strip()))
    return pairs


def to_simplified(lines, work):
    path = os.path.join(work, 'to_convert.txt')
    with open(path, 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines) + '\n')
    out = subprocess.run(['opencc', '-c', 't2s.json', '-i', path],
                         check=True, capture_output=True, text=True).stdout
    return out.rstrip('\n').split('\n')


def run_eval(args, input_path, output_path):
    command = [os.path.join(args.bin, 'fanyi-eval'), '--model_dir', args.model,
               '--input', input_path, '--output', output_path,
               '--beam_size', str(args.beam_size), '--threads', str(args.threads)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode not in (0, 2):
        sys.exit('fanyi-eval failed:\n' + result.stdout + result.stderr)
    with open(output_path, encoding='utf-8') as f:
        hypotheses = f.read().split('\n')[:-1]
    return result.stdout + result.stderr, hypotheses


def printed(output, label):
    match = re.search('(^|\n)' + re.escape(label) + r'([0-9.]+)', output)
    return float(match.group(2)) if match else float('nan')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', required=True)
    parser.add_argument('--bin', default='build/bin')
    parser.add_argument('--dev', default='../shared/data/en-zh/dev.tsv')
    parser.add_argument('--beam_size', type=int, default=4)
    parser.add_argument('--threads', type=int, default=1)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix='fanyi-real-text-')

    # Dev, sentence by sentence.
    dev = read_tsv(args.dev)
    dev_path = os.path.join(work, 'dev.tsv')
    with open(dev_path, 'w', encoding='utf-8') as f:
        f.writelines(f'{s}\t{t}\n' for s, t in dev)
    output, sentence_hyps = run_eval(args, dev_path,
                                     os.path.join(work, 'dev.hyp'))
    print(f'dev ({len(dev)} sentences, beam {args.beam_size}):')
    print(f'  BLEU, references in Simplified = {printed(output, "BLEU = "):.2f}')
    print(f'  BLEU, references as written   = '
          f'{printed(output, "raw references: BLEU = "):.2f}')
    mixed = re.search(r'script: (\d+) of (\d+)', output)
    print(f'  translations mixing scripts: {mixed.group(1)} of {mixed.group(2)}')

    # Paragraphs of 2-6 consecutive dev sentences.
    rng = random.Random(1)
    groups, start = [], 0
    while start < len(dev):
        size = rng.randint(2, 6)
        groups.append((start, min(len(dev), start + size)))
        start += size
    references = to_simplified([''.join(t for _, t in dev[b:e])
                                for b, e in groups], work)
    paragraph_path = os.path.join(work, 'paragraphs.tsv')
    with open(paragraph_path, 'w', encoding='utf-8') as f:
        for (b, e), reference in zip(groups, references):
            f.write(' '.join(s for s, _ in dev[b:e]) + '\t' + reference + '\n')
    output, paragraph_hyps = run_eval(args, paragraph_path,
                                      os.path.join(work, 'paragraphs.hyp'))
    refused = sum(1 for h in paragraph_hyps if not h)
    joined = [''.join(sentence_hyps[b:e]) for b, e in groups]
    whole = sacrebleu.corpus_bleu(paragraph_hyps, [references], tokenize='zh')
    one_by_one = sacrebleu.corpus_bleu(joined, [references], tokenize='zh')
    print(f'paragraphs ({len(groups)} of 2-6 dev sentences):')
    print(f'  BLEU, translated whole      = {whole.score:.2f}')
    print(f'  BLEU, sentences one by one  = {one_by_one.score:.2f}')
    print(f'  ratio = {whole.score / one_by_one.score:.3f}; refused: {refused}')

    # Verbatim spans.
    verbatim = []
    with open(os.path.join(HERE, 'verbatim.tsv'), encoding='utf-8') as f:
        for line in f:
            sentence, spans = line.rstrip('\n').split('\t')
            verbatim.append((sentence, [s.strip() for s in spans.split('|')]))
    verbatim_path = os.path.join(work, 'verbatim.txt')
    with open(verbatim_path, 'w', encoding='utf-8') as f:
        f.writelines(s + '\n' for s, _ in verbatim)
    output, hyps = run_eval(args, verbatim_path,
                            os.path.join(work, 'verbatim.hyp'))
    span_counts = re.search(r'spans: (\d+) carried by placeholders, (\d+)', output)
    kept = 0
    for (sentence, spans), hyp in zip(verbatim, hyps):
        if all(span in hyp for span in spans):
            kept += 1
        else:
            print(f'  lost a span: {sentence} -> {hyp}')
    print(f'verbatim: {kept} of {len(verbatim)} sentences keep every span '
          f'({100.0 * kept / len(verbatim):.1f}%)')
    carried, unplaced = int(span_counts.group(1)), int(span_counts.group(2))
    print(f'  {carried} spans carried by placeholders; the model placed '
          f'{carried - unplaced}, {unplaced} were appended to their sentence')


if __name__ == '__main__':
    main()
