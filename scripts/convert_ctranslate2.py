#!/usr/bin/env python3
"""Converts a fanyi checkpoint into a CTranslate2 model.

Reads the weights that `fanyi-export` wrote (raw little-endian float32 files
plus manifest.json; numpy alone reads them, no torch), the checkpoint's
config.json and its two vocabularies, describes the same network with
CTranslate2's Python specs API and saves it:

  build/bin/fanyi-export --model_dir models/en-zh --out /tmp/en-zh-export
  python3 scripts/convert_ctranslate2.py --model_dir models/en-zh \
      --export_dir /tmp/en-zh-export --out /tmp/en-zh-ct2

How fanyi's model maps onto CTranslate2's Transformer (and why):
  * Pre-norm blocks, x + sublayer(LayerNorm(x)), a final LayerNorm after each
    stack, ReLU feed-forward: TransformerEncoderSpec/TransformerDecoderSpec
    with pre_norm=True and Activation.RELU.
  * LayerNorm epsilon: fanyi uses config.layer_norm_epsilon (1e-6); it is
    written into the CTranslate2 config instead of relying on its default.
  * Positions: fanyi's sinusoidal table interleaves sin (even dimensions) and
    cos (odd dimensions). CTranslate2's built-in table puts all sines first and
    all cosines after, so the checkpoint's own table (the `positions` buffer)
    is given explicitly as position_encodings.encodings.
  * Embeddings are multiplied by sqrt(d_model) before positions are added, as
    CTranslate2 does with scale_embeddings=True.
  * Attention: fanyi has separate q/k/v/output projections with bias;
    CTranslate2 fuses q,k,v for self-attention (linear[0] = [3d, d]) and k,v
    for cross-attention (linear[1] = [2d, d]).
  * Tied generator: the output projection is the target embedding matrix,
    without bias.
  * Special tokens: fanyi's ids are <pad>=0, <unk>=1, <s>=2, </s>=3 and it
    appends </s> to every source and starts targets with <s>. CTranslate2 finds
    unk/bos/eos by token string (config unk_token, bos_token, eos_token,
    decoder_start_token), masks padding by length (so the <pad> id does not
    matter), and adds nothing to the source unless add_source_eos is set: it
    is set here, so callers pass plain source tokens, as to fanyi.
    Callers must also pass min_decoding_length=0 to translate_batch: its
    default of 1 forbids </s> as the first token, which fanyi allows.
"""

import argparse
import json
import math
import os
import shutil
import sys

import numpy as np
import ctranslate2
from ctranslate2.specs import common_spec, transformer_spec

EXPORT_FORMAT = "fanyi-weight-export"
EXPORT_FORMAT_VERSION = 1
VOCABULARY_FORMAT = "fanyi-vocabulary"
SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]


def fail(message):
    sys.exit("convert_ctranslate2.py: " + message)


def load_exported_weights(export_dir):
    """Returns {name: float32 array} from fanyi-export's manifest."""
    manifest_path = os.path.join(export_dir, "manifest.json")
    with open(manifest_path, encoding="utf-8") as file:
        manifest = json.load(file)
    if (
        manifest.get("format") != EXPORT_FORMAT
        or manifest.get("format_version") != EXPORT_FORMAT_VERSION
    ):
        fail(
            "%s: expected format %s version %d"
            % (manifest_path, EXPORT_FORMAT, EXPORT_FORMAT_VERSION)
        )
    weights = {}
    for entry in manifest["tensors"]:
        path = os.path.join(export_dir, entry["file"])
        values = np.fromfile(path, dtype="<f4")
        shape = tuple(entry["shape"])
        if values.size != math.prod(shape):
            fail(
                "%s: %d values, the manifest says shape %s"
                % (path, values.size, list(shape))
            )
        weights[entry["name"]] = values.reshape(shape).astype(np.float32)
    return weights


def load_vocabulary(path):
    with open(path, encoding="utf-8") as file:
        vocabulary = json.load(file)
    if vocabulary.get("format") != VOCABULARY_FORMAT:
        fail("%s: not a fanyi vocabulary" % path)
    tokens = vocabulary["tokens"]
    if tokens[: len(SPECIALS)] != SPECIALS:
        fail("%s: the first tokens must be %s" % (path, SPECIALS))
    return tokens


class WeightReader:
    """Hands out exported tensors by name and remembers which were used."""

    def __init__(self, weights):
        self._weights = weights
        self._used = set()

    def __call__(self, name):
        if name not in self._weights:
            fail("the export has no tensor '%s'" % name)
        self._used.add(name)
        return self._weights[name]

    def unused(self):
        return sorted(set(self._weights) - self._used)


def set_linear(spec, read, prefix):
    spec.weight = read(prefix + ".weight")  # [out, in], as CTranslate2 wants.
    spec.bias = read(prefix + ".bias")


def set_fused_linear(spec, read, prefixes):
    # Projections computed by one GEMM in CTranslate2: rows stacked in order.
    spec.weight = np.concatenate([read(p + ".weight") for p in prefixes])
    spec.bias = np.concatenate([read(p + ".bias") for p in prefixes])


def set_layer_norm(spec, read, prefix):
    spec.gamma = read(prefix + ".weight")
    spec.beta = read(prefix + ".bias")


def set_feed_forward(spec, read, prefix):
    set_layer_norm(spec.layer_norm, read, prefix + ".feed_forward_norm")
    set_linear(spec.linear_0, read, prefix + ".feed_forward.inner")
    set_linear(spec.linear_1, read, prefix + ".feed_forward.outer")


def build_spec(config, weights, source_tokens, target_tokens):
    model = config["model"]
    read = WeightReader(weights)
    projections = ("query_projection", "key_projection", "value_projection")

    encoder = transformer_spec.TransformerEncoderSpec(
        model["encoder_layers"],
        model["heads"],
        pre_norm=True,
        activation=common_spec.Activation.RELU,
    )
    decoder = transformer_spec.TransformerDecoderSpec(
        model["decoder_layers"],
        model["heads"],
        pre_norm=True,
        activation=common_spec.Activation.RELU,
    )
    positions = read("positions")  # [max_positions, d_model], interleaved.

    encoder.embeddings[0].weight = read("source_embedding.weight")
    encoder.scale_embeddings = True
    encoder.position_encodings.encodings = positions
    set_layer_norm(encoder.layer_norm, read, "encoder_norm")
    for i, layer in enumerate(encoder.layer):
        prefix = "encoder_layers.%d" % i
        attention = layer.self_attention
        set_layer_norm(attention.layer_norm, read, prefix + ".attention_norm")
        set_fused_linear(
            attention.linear[0],
            read,
            ["%s.self_attention.%s" % (prefix, p) for p in projections],
        )
        set_linear(
            attention.linear[1], read, prefix + ".self_attention.output_projection"
        )
        set_feed_forward(layer.ffn, read, prefix)

    target_embedding = read("target_embedding.weight")
    decoder.embeddings.weight = target_embedding
    decoder.scale_embeddings = True
    decoder.position_encodings.encodings = positions
    set_layer_norm(decoder.layer_norm, read, "decoder_norm")
    if model["tie_target_embeddings"]:
        # Same array as the embedding: CTranslate2 stores it once (alias).
        decoder.projection.weight = target_embedding
    else:
        set_linear(decoder.projection, read, "generator")
    for i, layer in enumerate(decoder.layer):
        prefix = "decoder_layers.%d" % i
        set_layer_norm(
            layer.self_attention.layer_norm, read, prefix + ".self_attention_norm"
        )
        set_fused_linear(
            layer.self_attention.linear[0],
            read,
            ["%s.self_attention.%s" % (prefix, p) for p in projections],
        )
        set_linear(
            layer.self_attention.linear[1],
            read,
            prefix + ".self_attention.output_projection",
        )
        set_layer_norm(
            layer.attention.layer_norm, read, prefix + ".cross_attention_norm"
        )
        set_linear(
            layer.attention.linear[0],
            read,
            prefix + ".cross_attention.query_projection",
        )
        set_fused_linear(
            layer.attention.linear[1],
            read,
            [
                prefix + ".cross_attention.key_projection",
                prefix + ".cross_attention.value_projection",
            ],
        )
        set_linear(
            layer.attention.linear[2],
            read,
            prefix + ".cross_attention.output_projection",
        )
        set_feed_forward(layer.ffn, read, prefix)

    if read.unused():
        fail("exported tensors not mapped to CTranslate2: %s" % read.unused())

    spec = transformer_spec.TransformerSpec(encoder, decoder)
    spec.config.layer_norm_epsilon = float(model["layer_norm_epsilon"])
    spec.config.unk_token = "<unk>"
    spec.config.bos_token = "<s>"
    spec.config.eos_token = "</s>"
    spec.config.decoder_start_token = "<s>"
    spec.config.add_source_bos = False
    spec.config.add_source_eos = True  # fanyi trains on "ids </s>".
    spec.register_source_vocabulary(source_tokens)
    spec.register_target_vocabulary(target_tokens)
    return spec


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model_dir", required=True, help="fanyi checkpoint (config + vocabularies)"
    )
    parser.add_argument(
        "--export_dir", required=True, help="output of fanyi-export for that model"
    )
    parser.add_argument("--out", required=True, help="CTranslate2 model directory")
    parser.add_argument(
        "--force", action="store_true", help="replace --out if it exists"
    )
    args = parser.parse_args()

    model_dir = args.model_dir
    if not os.path.isfile(os.path.join(model_dir, "config.json")) and os.path.isdir(
        os.path.join(model_dir, "best")
    ):
        model_dir = os.path.join(model_dir, "best")  # A training output dir.
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as file:
        config = json.load(file)
    if config.get("format") != "fanyi-checkpoint":
        fail("%s/config.json: not a fanyi checkpoint" % model_dir)
    source_tokens = load_vocabulary(os.path.join(model_dir, "src_vocab.json"))
    target_tokens = load_vocabulary(os.path.join(model_dir, "tgt_vocab.json"))
    weights = load_exported_weights(args.export_dir)

    spec = build_spec(config, weights, source_tokens, target_tokens)
    spec.validate()
    spec.optimize(quantization="float32")
    if os.path.exists(args.out):
        if not args.force:
            fail("%s exists (use --force to replace it)" % args.out)
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    spec.save(args.out)
    print(
        "CTranslate2 %s model (%s) written to %s"
        % (ctranslate2.__version__, config["model_version"], args.out)
    )


if __name__ == "__main__":
    main()
