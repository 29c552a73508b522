#!/usr/bin/env python3
"""Writes random-weight CTranslate2 models of the three families fanyi
serves, with CTranslate2's own Python specs API, and CTranslate2's own
translations of random sources, for tests/ctranslate2_import_test.cc:

  python3 tests/ctranslate2_translations.py OUT_DIR [CORPUS]

OUT_DIR/<family>/ is a model directory as ModelSpec.save writes it:
  opennmt  as CTranslate2's OpenNMT-py converter writes Argos' models:
           pre-norm, ReLU, one vocabulary ("<unk>", "<blank>", "<s>",
           "</s>", ...) and one matrix for both embeddings and the output
           projection, which has a bias; sources without </s>; positions
           computed.
  marian   as its Marian converter writes OPUS-MT's: post-norm, Swish,
           separate vocabularies ("</s>", "<unk>", ...), an output
           projection of its own, a stored position table, sources ended
           by </s>, targets started from </s> read as a zero embedding.
  m2m      as its Transformers converter writes M2M-100's and NLLB's:
           pre-norm, GELU, a layer norm after the embeddings, one
           vocabulary ("<s>", "<pad>", "</s>", "<unk>", ...) and one
           matrix, no output bias, a stored table, targets started from
           </s>.
With CORPUS (a TSV file of sentence pairs), it also writes an Argos
Translate package as argos-train builds them: a SentencePiece model
trained by spm_train with its defaults (the nmt_nfkc normalization) on
CORPUS's first column, and an opennmt model over its pieces, as
OUT_DIR/argos/ (metadata.json, model/, sentencepiece.model) and as
OUT_DIR/translate-en_de-1_0.argosmodel (the same in a zip). Its entry in
expected.json holds texts, their pieces by the sentencepiece package, and
CTranslate2's greedy and beam 4 translations of those pieces, as pieces
and as text (the pieces decoded by sentencepiece).
Per family, "greedy_alignment" and "beam_alignment" hold the source
position each token of the float32 translations attended to most (the
argmax of the attention translate_batch returns), and "greedy_replaced"
and "beam_replaced" the translations with replace_unknowns (the opennmt
family makes <unk> likely, so that it acts); the package's texts are
decoded from translations with replace_unknowns, as argos-translate asks.
For m2m, "greedy_en_zh" and "beam_en_zh" hold its translations from
English into Chinese: "__en__" before each source, "__zh__" as
target_prefix, which is cut from each.
Per family, "prefix" names a target token (M2M-100's "__zh__", a plain
token elsewhere) and "greedy_prefixed", "beam_prefixed" and
"beam_free_prefixed" hold CTranslate2's float32 translations with it as
target_prefix (which they start with).
OUT_DIR/expected.json holds "free_length" and, per family and for the
package, "beam_free": beam 4 translations whose length is free up to it
(CTranslate2's default length_penalty of 1 for the families, 0.2 as
argos-translate asks for the package), and it holds LENGTH (every translation is
made exactly that long: min_decoding_length = max_decoding_length), the
sources (tokens joined by spaces), and CTranslate2's translations on the
CPU, greedy and beam 4, in float32 ("greedy", "beam") and int8
("greedy_int8", "beam_int8"), with the log-probability score_batch gives
each token of the float32 greedy ones (</s> included).
"""

import json
import os
import sys

import ctranslate2
import numpy as np
from ctranslate2.specs import common_spec, transformer_spec

D_MODEL, HEADS, D_FF, LAYERS = 32, 4, 64, 2
LENGTH = 12
FREE_LENGTH = 24  # The cap of the translations whose length is free.
EOS_BIAS = 2.5
UNK_BIAS = 2.0  # Makes <unk> frequent, for replace_unknowns to act on.
SOURCES = 40

FAMILIES = {
    "opennmt": dict(
        spec=dict(pre_norm=True, activation=common_spec.Activation.RELU),
        source=["<unk>", "<blank>", "<s>", "</s>"] + ["p%d" % i for i in range(56)],
        target=None,  # Shared.
        tied=True,
        projection_bias=True,
        stored_positions=False,
        zero_start=False,
        config=dict(decoder_start_token="<s>", add_source_eos=False),
        unk_bias=UNK_BIAS,
    ),
    "marian": dict(
        spec=dict(pre_norm=False, activation=common_spec.Activation.SWISH),
        source=["</s>", "<unk>"] + ["s%d" % i for i in range(50)],
        target=["</s>", "<unk>"] + ["t%d" % i for i in range(61)],
        tied=False,
        projection_bias=True,
        stored_positions=True,
        zero_start=True,
        config=dict(decoder_start_token="</s>", add_source_eos=True),
    ),
    "m2m": dict(
        spec=dict(
            pre_norm=True,
            activation=common_spec.Activation.GELU,
            layernorm_embedding=True,
        ),
        source=["<s>", "<pad>", "</s>", "<unk>"]
        + ["w%d" % i for i in range(54)]
        + ["__en__", "__zh__"],
        target=None,
        tied=True,
        projection_bias=False,
        stored_positions=True,
        zero_start=False,
        config=dict(decoder_start_token="</s>", add_source_eos=True),
    ),
}


# Text for the Argos package besides CORPUS's: what NFKC and the NMT rules
# change, odd spacing, characters no piece covers.
ARGOS_TEXTS = [
    "ＦＵＬＬ－ｗｉｄｔｈ ＡＢＣ １２３，ｏｋ？",
    "the \ufb01rst \ufb02oor, \u2460 and \u00bd cup, 5 \u338f",
    "non\u00a0breaking and ideographic\u3000space",
    "cafe\u0301 and caf\u00e9",
    "  leading and trailing spaces   ",
    "runs    of     spaces",
    "Tom bought 東京 tickets",
]


def one_by_one(translator, sources, **options):
    """translate_batch's results for `sources`, one sentence a call: in a
    batch of several, the first step of a beam search reports another
    sentence's attention (ctranslate2 4.8), which replace_unknowns reads."""
    return [translator.translate_batch([tokens], **options)[0]
            for tokens in sources]


def build_argos(out_dir, corpus, random):
    """The Argos package and its expected translations."""
    import subprocess
    import zipfile

    import sentencepiece

    package = os.path.join(out_dir, "argos")
    os.makedirs(os.path.join(package, "model"), exist_ok=True)
    with open(corpus, encoding="utf-8") as file:
        pairs = [line.rstrip("\n").split("\t") for line in file]
    text_file = os.path.join(out_dir, "argos_corpus.txt")
    with open(text_file, "w", encoding="utf-8") as file:
        file.writelines(pair[0] + "\n" for pair in pairs)
    prefix = os.path.join(package, "sentencepiece")
    subprocess.run(
        ["spm_train", "--input=" + text_file, "--model_prefix=" + prefix,
         "--vocab_size=300", "--minloglevel=2"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.remove(prefix + ".vocab")
    processor = sentencepiece.SentencePieceProcessor(model_file=prefix + ".model")
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    vocabulary = ["<unk>", "<blank>", "<s>", "</s>"] + [
        piece for piece in pieces if piece not in ("<unk>", "<s>", "</s>")
    ]
    FAMILIES["argos"] = dict(FAMILIES["opennmt"], source=vocabulary)
    spec, _ = build("argos", random)
    del FAMILIES["argos"]
    spec.validate()
    spec.optimize(quantization="float32")
    model_dir = os.path.join(package, "model")
    spec.save(model_dir)
    with open(os.path.join(package, "metadata.json"), "w") as file:
        json.dump({"package_version": "1.0", "argos_version": "1.9",
                   "from_code": "en", "from_name": "English", "to_code": "de",
                   "to_name": "German", "type": "translate"}, file)
    archive = os.path.join(out_dir, "translate-en_de-1_0.argosmodel")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for folder, _, files in os.walk(package):
            for name in files:
                path = os.path.join(folder, name)
                zipped.write(path, os.path.join(
                    "translate-en_de-1_0", os.path.relpath(path, package)))

    texts = [pair[0] for pair in pairs[:30]] + ARGOS_TEXTS
    sources = [processor.encode(text, out_type=str) for text in texts]
    translator = ctranslate2.Translator(
        model_dir, device="cpu", compute_type="float32", intra_threads=1)
    fixed = dict(min_decoding_length=LENGTH, max_decoding_length=LENGTH)
    expected = {"texts": texts, "pieces": [" ".join(p) for p in sources]}
    for beam, key in ((1, "greedy"), (4, "beam")):
        results = translator.translate_batch(sources, beam_size=beam, **fixed)
        expected[key] = [" ".join(r.hypotheses[0]) for r in results]
        # Text as argos-translate makes it: unknowns replaced.
        results = one_by_one(
            translator, sources, beam_size=beam, replace_unknowns=True, **fixed)
        expected[key + "_text"] = [
            processor.decode(r.hypotheses[0]) for r in results]
    # As argos-translate calls it: beam 4, length_penalty 0.2, lengths free
    # up to FREE_LENGTH.
    results = translator.translate_batch(
        sources, beam_size=4, length_penalty=0.2, max_decoding_length=FREE_LENGTH)
    expected["beam_free"] = [" ".join(r.hypotheses[0]) for r in results]
    # As argos-translate translates with a package's target_prefix: the
    # prefix forced, then cut from the hypothesis before it is decoded.
    prefix = vocabulary[10]
    results = translator.translate_batch(
        sources, beam_size=1, target_prefix=[[prefix]] * len(sources),
        replace_unknowns=True, **fixed)
    expected["prefix"] = prefix
    expected["greedy_prefixed_text"] = [
        processor.decode(r.hypotheses[0][1:]) for r in results]
    return expected


def build(family, random):
    """The spec of `family` with random weights."""
    f = FAMILIES[family]
    spec = transformer_spec.TransformerSpec.from_config((LAYERS, LAYERS), HEADS, **f["spec"])
    source = f["source"]
    target = f["target"] or source

    def array(*shape, scale=1.0):
        return (random.standard_normal(shape) * scale).astype(np.float32)

    def linear(layer, rows, columns, bias=True):
        layer.weight = array(rows, columns, scale=2 * columns**-0.5)
        if bias:
            layer.bias = array(rows, scale=0.1)

    def norm(layer):
        layer.gamma = 1 + array(D_MODEL, scale=0.1)
        layer.beta = array(D_MODEL, scale=0.1)

    encoder, decoder = spec.encoder, spec.decoder
    # N(0, 1/d_model): unit rows once scaled by sqrt(d_model), and logits
    # of about unit size from a tied projection.
    source_embeddings = array(len(source), D_MODEL, scale=D_MODEL**-0.5)
    encoder.embeddings[0].weight = source_embeddings
    if f["target"] is None:
        decoder.embeddings.weight = source_embeddings
    else:
        decoder.embeddings.weight = array(len(target), D_MODEL, scale=D_MODEL**-0.5)
    if f["tied"]:
        decoder.projection.weight = decoder.embeddings.weight
        if f["projection_bias"]:
            decoder.projection.bias = array(len(target), scale=0.1)
    else:
        linear(decoder.projection, len(target), D_MODEL, f["projection_bias"])
    if f["projection_bias"]:
        # </s> likely enough that translations of free length end at
        # different lengths, where their normalization decides.
        decoder.projection.bias[target.index("</s>")] += EOS_BIAS
        decoder.projection.bias[target.index("<unk>")] += f.get("unk_bias", 0)
    if f["stored_positions"]:
        table = array(256, D_MODEL, scale=0.5)
        encoder.position_encodings.encodings = table
        decoder.position_encodings.encodings = table
    if f["zero_start"]:
        decoder.start_from_zero_embedding = True
    for stack in (encoder, decoder):
        if hasattr(stack, "layer_norm"):
            norm(stack.layer_norm)
        if hasattr(stack, "layernorm_embedding"):
            norm(stack.layernorm_embedding)
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
    for key, value in f["config"].items():
        setattr(spec.config, key, value)
    if f["target"] is None:
        spec.register_source_vocabulary(source)
        spec.register_target_vocabulary(source)
    else:
        spec.register_source_vocabulary(source)
        spec.register_target_vocabulary(target)
    return spec, source


def main():
    out_dir = sys.argv[1]
    random = np.random.default_rng(2026)
    expected = {"length": LENGTH, "free_length": FREE_LENGTH}
    for family in FAMILIES:
        f = FAMILIES[family]
        spec, source = build(family, random)
        model_dir = os.path.join(out_dir, family)
        spec.validate()
        spec.optimize(quantization="float32")
        os.makedirs(model_dir, exist_ok=True)
        spec.save(model_dir)
        # Sources of ordinary tokens (none of the first four), 1 to 15 long.
        words = source[4:]
        sources = [
            [words[i] for i in random.integers(0, len(words), random.integers(1, 16))]
            for _ in range(SOURCES)
        ]
        fixed = dict(min_decoding_length=LENGTH, max_decoding_length=LENGTH)
        expected[family] = {"sources": [" ".join(tokens) for tokens in sources]}
        for compute_type, suffix in (("float32", ""), ("int8", "_int8")):
            translator = ctranslate2.Translator(
                model_dir, device="cpu", compute_type=compute_type, intra_threads=1
            )
            for beam, key in ((1, "greedy"), (4, "beam")):
                results = translator.translate_batch(sources, beam_size=beam, **fixed)
                expected[family][key + suffix] = [
                    " ".join(result.hypotheses[0]) for result in results
                ]
            if compute_type == "float32":
                # translate_batch's own length handling (length_penalty 1).
                results = translator.translate_batch(
                    sources, beam_size=4, max_decoding_length=FREE_LENGTH)
                expected[family]["beam_free"] = [
                    " ".join(result.hypotheses[0]) for result in results
                ]
            if compute_type == "float32":
                # A target prefix (M2M-100's language token, or any token),
                # returned with the translation as translate_batch does.
                prefix = "__zh__" if "__zh__" in source else (f["target"] or source)[10]
                prefixes = [[prefix]] * len(sources)
                expected[family]["prefix"] = prefix
                for beam, key in ((1, "greedy"), (4, "beam")):
                    results = translator.translate_batch(
                        sources, beam_size=beam, target_prefix=prefixes, **fixed)
                    expected[family][key + "_prefixed"] = [
                        " ".join(result.hypotheses[0]) for result in results
                    ]
                results = translator.translate_batch(
                    sources, beam_size=4, max_decoding_length=FREE_LENGTH,
                    target_prefix=prefixes)
                expected[family]["beam_free_prefixed"] = [
                    " ".join(result.hypotheses[0]) for result in results
                ]
            if compute_type == "float32":
                # Where each token attended (the argmax of the attention
                # translate_batch returns), and unknowns replaced by it.
                for beam, key in ((1, "greedy"), (4, "beam")):
                    results = one_by_one(translator, sources, beam_size=beam,
                                         return_attention=True, **fixed)
                    expected[family][key + "_alignment"] = [
                        [int(np.argmax(step)) for step in r.attention[0]]
                        for r in results
                    ]
                    results = one_by_one(translator, sources, beam_size=beam,
                                         replace_unknowns=True, **fixed)
                    expected[family][key + "_replaced"] = [
                        " ".join(r.hypotheses[0]) for r in results
                    ]
            if compute_type == "float32" and "__en__" in source:
                # A pair of a multilingual model: its source language token
                # first, its target's forced, as M2M-100 is called.
                for beam, key in ((1, "greedy"), (4, "beam")):
                    results = translator.translate_batch(
                        [["__en__"] + tokens for tokens in sources],
                        beam_size=beam,
                        target_prefix=[["__zh__"]] * len(sources), **fixed)
                    expected[family][key + "_en_zh"] = [
                        " ".join(r.hypotheses[0][1:]) for r in results
                    ]
            if compute_type == "float32":
                greedy = [line.split() for line in expected[family]["greedy"]]
                scores = translator.score_batch(sources, greedy)
                expected[family]["greedy_log_probs"] = [
                    score.log_probs for score in scores
                ]
    if len(sys.argv) > 2:
        expected["argos"] = build_argos(out_dir, sys.argv[2], random)
    with open(os.path.join(out_dir, "expected.json"), "w") as out:
        json.dump(expected, out, indent=1)


if __name__ == "__main__":
    main()
