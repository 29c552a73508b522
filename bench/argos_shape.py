#!/usr/bin/env python3
"""Writes a CTranslate2 model of the Argos shape with random weights, as
CTranslate2's OpenNMT-py converter lays out Argos Translate's models: 6+6
pre-norm layers, d_model 512, d_ff 2048, 8 heads, ReLU, one shared
vocabulary whose matrix is both embeddings and the output projection
(which has a bias), sources without </s>:

  python3 bench/argos_shape.py --pieces VOCAB_FILE --vocabulary 32000 \\
      --out DIR

VOCAB_FILE is a SentencePiece model's .vocab (spm_train writes it): its
pieces come first, then made-up ones up to --vocabulary entries, so that
real sources tokenize into the vocabulary and the projection is as wide as
a real model's. DIR/float32 and DIR/int8 get the model saved in each (int8:
as Argos ships it, weights quantized per row by CTranslate2 itself).
"""

import argparse
import os

import numpy as np
from ctranslate2.specs import common_spec, transformer_spec

LAYERS, D_MODEL, D_FF, HEADS = 6, 512, 2048, 8


def build(tokens, seed):
    random = np.random.default_rng(seed)

    def array(*shape, scale):
        return (random.standard_normal(shape) * scale).astype(np.float32)

    def linear(layer, rows, columns):
        layer.weight = array(rows, columns, scale=columns**-0.5)
        layer.bias = array(rows, scale=0.02)

    def norm(layer):
        layer.gamma = np.ones(D_MODEL, np.float32)
        layer.beta = np.zeros(D_MODEL, np.float32)

    spec = transformer_spec.TransformerSpec.from_config(
        (LAYERS, LAYERS), HEADS, pre_norm=True, activation=common_spec.Activation.RELU
    )
    embeddings = array(len(tokens), D_MODEL, scale=D_MODEL**-0.5)
    spec.encoder.embeddings[0].weight = embeddings
    spec.decoder.embeddings.weight = embeddings
    spec.decoder.projection.weight = embeddings
    spec.decoder.projection.bias = array(len(tokens), scale=0.02)
    for stack in (spec.encoder, spec.decoder):
        norm(stack.layer_norm)
        for layer in stack.layer:
            norm(layer.self_attention.layer_norm)
            linear(layer.self_attention.linear[0], 3 * D_MODEL, D_MODEL)
            linear(layer.self_attention.linear[1], D_MODEL, D_MODEL)
            if hasattr(layer, "attention"):
                norm(layer.attention.layer_norm)
                linear(layer.attention.linear[0], D_MODEL, D_MODEL)
                linear(layer.attention.linear[1], 2 * D_MODEL, D_MODEL)
                linear(layer.attention.linear[2], D_MODEL, D_MODEL)
            norm(layer.ffn.layer_norm)
            linear(layer.ffn.linear_0, D_FF, D_MODEL)
            linear(layer.ffn.linear_1, D_MODEL, D_FF)
    spec.config.decoder_start_token = "<s>"
    spec.config.add_source_eos = False
    spec.register_source_vocabulary(tokens)
    spec.register_target_vocabulary(tokens)
    return spec


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pieces", required=True)
    parser.add_argument("--vocabulary", type=int, default=32000)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    tokens = ["<unk>", "<blank>", "<s>", "</s>"]
    with open(args.pieces, encoding="utf-8") as vocab:
        for line in vocab:
            piece = line.split("\t")[0]
            if piece and piece not in ("<unk>", "<s>", "</s>"):
                tokens.append(piece)
    tokens += ["made_up_%d" % i for i in range(args.vocabulary - len(tokens))]
    for quantization in ("float32", "int8"):
        spec = build(tokens, args.seed)
        spec.validate()
        spec.optimize(quantization=quantization)
        out = os.path.join(args.out, quantization)
        os.makedirs(out, exist_ok=True)
        spec.save(out)


if __name__ == "__main__":
    main()
