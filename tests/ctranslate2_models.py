#!/usr/bin/env python3
"""Writes small CTranslate2 models with CTranslate2's own Python specs API,
for tests/ctranslate2_model_test.cc:

  python3 tests/ctranslate2_models.py OUT_DIR

Two Transformers of random weights (fixed seed), each saved once per
quantization (float32, float16, int8, int16) into
OUT_DIR/<variant>/<quantization>/ as ModelSpec.save writes it (model.bin,
config.json, vocabularies):
  separate  its own source and target vocabularies, biases on every linear
            layer, a stored position table;
  shared    one vocabulary, and one matrix for both embeddings and the
            output projection (which the saved file holds once, with
            aliases).
OUT_DIR/options/<name>/ holds float32 models of the options a converter
may set (OPTIONS below): one fanyi serves (post-norm, GELU, a layer norm
after the embeddings, a config.json as M2M-100's), those it refuses, and a
decoder-only model.
OUT_DIR/expected.json also holds "ct2_positions": the position table
CTranslate2 computes for a model that stores none (rows for 40 positions,
d_model 16), as its own Encoder outputs it for a model whose every weight
is zero (so that the output is the positions alone).
OUT_DIR/expected.json gives, per variant, every weight's float32 values
before quantization (name -> {"shape", "values"}), the scalar flags
(name -> value) and the aliases the float32 file holds (alias -> variable).
"""

import json
import os
import sys

import ctranslate2
import numpy as np
from ctranslate2.specs import common_spec, model_spec, transformer_spec

D_MODEL, HEADS, D_FF, MAX_POSITIONS = 8, 4, 16, 20
# bfloat16 is left out: CTranslate2's specs convert to it through torch,
# which the tests do not install; ctranslate2_model_test writes bfloat16
# items itself.
QUANTIZATIONS = ("float32", "float16", "int8", "int16")


# Options of TransformerSpec.from_config, by model name, and config.json
# settings.
OPTIONS = {
    "postnorm_gelu": (
        dict(
            pre_norm=False,
            activation=common_spec.Activation.GELU,
            layernorm_embedding=True,
        ),
        dict(decoder_start_token="</s>", add_source_eos=True, layer_norm_epsilon=1e-5),
    ),
    "relative_positions": (dict(with_relative_position=True), {}),
    "t5_attention_bias": (dict(relative_attention_bias=True), {}),
    "gated_ffn": (dict(ffn_glu=True), {}),
    "rms_norm": (dict(rms_norm=True), {}),
    "multi_query": (dict(multi_query_attention=True), {}),
    "two_source_embeddings": (dict(num_source_embeddings=2), {}),
    "tanh": (dict(activation=common_spec.Activation.Tanh), {}),
}


def fill_unset(spec, vocabulary_size):
    """Gives every weight still unset (the options' own) small values."""
    for name, value in spec.variables().items():
        if value is None:
            scope, attribute = name.rsplit("/", 1)
            if attribute in ("gamma", "beta"):
                shape = (D_MODEL,)
            elif "embeddings" in scope:
                shape = (vocabulary_size, D_MODEL)
            else:
                shape = (2, 2)
            setattr(
                model_spec.index_spec(spec, scope),
                attribute,
                np.full(shape, 0.5, np.float32),
            )


def build(variant, options=None):
    """The spec of `variant` with its weights, and those weights by name."""
    random = np.random.default_rng(7)
    weights = {}

    def array(name, *shape):
        value = random.standard_normal(shape).astype(np.float32)
        weights[name] = value
        return value

    def linear(spec, name, rows, columns, bias):
        spec.weight = array(name + "/weight", rows, columns)
        if bias:
            spec.bias = array(name + "/bias", rows)

    def norm(spec, name):
        spec.gamma = array(name + "/gamma", D_MODEL)
        if hasattr(spec, "beta"):
            spec.beta = array(name + "/beta", D_MODEL)

    shared = variant == "shared"
    bias = not shared
    spec = transformer_spec.TransformerSpec.from_config((2, 1), HEADS, **(options or {}))
    source_vocabulary = ["<unk>", "<s>", "</s>"] + ["s%d" % i for i in range(9)]
    target_vocabulary = (
        source_vocabulary
        if shared
        else ["<unk>", "<s>", "</s>"] + ["t%d" % i for i in range(11)]
    )
    encoder, decoder = spec.encoder, spec.decoder
    embeddings = array(
        "encoder/embeddings_0/weight", len(source_vocabulary), D_MODEL
    )
    encoder.embeddings[0].weight = embeddings
    if shared:
        decoder.embeddings.weight = embeddings
        decoder.projection.weight = embeddings
    else:
        decoder.embeddings.weight = array(
            "decoder/embeddings/weight", len(target_vocabulary), D_MODEL
        )
        linear(
            decoder.projection,
            "decoder/projection",
            len(target_vocabulary),
            D_MODEL,
            True,
        )
        if hasattr(encoder, "position_encodings"):
            encoder.position_encodings.encodings = array(
                "encoder/position_encodings/encodings", MAX_POSITIONS, D_MODEL
            )
    for name, stack in (("encoder", encoder), ("decoder", decoder)):
        if hasattr(stack, "layer_norm"):
            norm(stack.layer_norm, name + "/layer_norm")
        for i, layer in enumerate(stack.layer):
            prefix = "%s/layer_%d" % (name, i)
            attention = layer.self_attention
            norm(attention.layer_norm, prefix + "/self_attention/layer_norm")
            linear(
                attention.linear[0],
                prefix + "/self_attention/linear_0",
                3 * D_MODEL,
                D_MODEL,
                bias,
            )
            linear(
                attention.linear[1],
                prefix + "/self_attention/linear_1",
                D_MODEL,
                D_MODEL,
                bias,
            )
            if name == "decoder":
                cross = layer.attention
                norm(cross.layer_norm, prefix + "/attention/layer_norm")
                for j, rows in enumerate((D_MODEL, 2 * D_MODEL, D_MODEL)):
                    linear(
                        cross.linear[j],
                        "%s/attention/linear_%d" % (prefix, j),
                        rows,
                        D_MODEL,
                        bias,
                    )
            norm(layer.ffn.layer_norm, prefix + "/ffn/layer_norm")
            linear(layer.ffn.linear_0, prefix + "/ffn/linear_0", D_FF, D_MODEL, bias)
            linear(layer.ffn.linear_1, prefix + "/ffn/linear_1", D_MODEL, D_FF, bias)
    for _ in encoder.embeddings:
        spec.register_source_vocabulary(source_vocabulary)
    spec.register_target_vocabulary(target_vocabulary)
    return spec, weights


def computed_positions(out_dir, positions=40, d_model=16):
    """The position table CTranslate2 computes, from its own Encoder."""
    encoder = transformer_spec.TransformerEncoderSpec(1, 2, no_final_norm=True)
    spec = transformer_spec.TransformerEncoderModelSpec(encoder)
    shapes = {
        "self_attention/linear_0": (3 * d_model, d_model),
        "self_attention/linear_1": (d_model, d_model),
        "ffn/linear_0": (2 * d_model, d_model),
        "ffn/linear_1": (d_model, 2 * d_model),
    }
    for name, value in spec.variables().items():
        if value is not None:
            continue
        scope, attribute = name.rsplit("/", 1)
        if attribute in ("gamma", "beta"):
            array = np.full((d_model,), attribute == "gamma", np.float32)
        elif "embeddings" in scope:
            array = np.zeros((4, d_model), np.float32)
        else:
            layer_part = scope.split("/", 2)[2]
            array = np.zeros(shapes[layer_part], np.float32)
        setattr(model_spec.index_spec(spec, scope), attribute, array)
    spec.register_vocabulary(["<unk>", "<s>", "</s>", "a"])
    spec.validate()
    spec.optimize(quantization="float32")
    model_dir = os.path.join(out_dir, "options", "encoder_positions")
    os.makedirs(model_dir, exist_ok=True)
    spec.save(model_dir)
    output = ctranslate2.Encoder(model_dir).forward_batch([["a"] * positions])
    return np.array(output.last_hidden_state)[0].tolist()


def main():
    out_dir = sys.argv[1]
    expected = {"ct2_positions": computed_positions(out_dir)}
    for variant in ("separate", "shared"):
        for quantization in QUANTIZATIONS:
            spec, weights = build(variant)
            spec.validate()
            spec.optimize(quantization=quantization)
            model_dir = os.path.join(out_dir, variant, quantization)
            os.makedirs(model_dir, exist_ok=True)
            spec.save(model_dir)
            if quantization != "float32":
                continue
            flags = {}
            aliases = {}
            for name, value in spec.variables().items():
                if isinstance(value, str):
                    aliases[name] = value
                elif value.is_scalar():
                    flags[name] = int(value.numpy())
            expected[variant] = {
                "weights": {
                    name: {
                        "shape": list(value.shape),
                        "values": [float(x) for x in value.flatten()],
                    }
                    for name, value in weights.items()
                },
                "flags": flags,
                "aliases": aliases,
            }
    for name, (options, config) in OPTIONS.items():
        spec, _ = build("separate", options)
        fill_unset(spec, 12)
        for key, value in config.items():
            setattr(spec.config, key, value)
        spec.validate()
        spec.optimize(quantization="float32")
        model_dir = os.path.join(out_dir, "options", name)
        os.makedirs(model_dir, exist_ok=True)
        spec.save(model_dir)
    decoder_only = transformer_spec.TransformerDecoderModelSpec.from_config(1, HEADS)
    fill_unset(decoder_only, 3)
    decoder_only.register_vocabulary(["<unk>", "<s>", "</s>"])
    decoder_only.validate()
    model_dir = os.path.join(out_dir, "options", "decoder_only")
    os.makedirs(model_dir, exist_ok=True)
    decoder_only.save(model_dir)
    with open(os.path.join(out_dir, "expected.json"), "w", encoding="utf-8") as file:
        json.dump(expected, file)


if __name__ == "__main__":
    main()
