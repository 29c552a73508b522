#ifndef FANYI_COMMON_MODEL_CTRANSLATE2_IMPORT_H_
#define FANYI_COMMON_MODEL_CTRANSLATE2_IMPORT_H_

#include <string>

#include "common/model/checkpoint.h"
#include "common/model/ctranslate2_directory.h"

namespace fanyi {

// Whether `path` is a CTranslate2 model directory (it holds a model.bin
// and no fanyi model.pt).
bool IsCt2ModelDirectory(const std::string& path);

// A CTranslate2 Transformer as a fanyi checkpoint on the CPU, computing what
// CTranslate2 computes. Its vocabularies keep CTranslate2's tokens in their
// order after fanyi's four specials, which take the model's own unk and eos
// rows (and its decoder start token's, when that is a token of its own);
// rows fanyi adds (<pad>, and a start row when the model starts from </s>
// or from a zero embedding) are never predicted: their output bias is
// -10,000. Weights come as float32 (int8 and int16 dequantized by their
// scales); fused projections are split. Throws std::runtime_error, naming
// the directory and the option, for what fanyi's Transformer cannot compute:
// encoder and decoder that differ in heads, activation, embedding scaling
// or norms, position tables that differ, sources that start with <s>, no
// decoder start token, and duplicate or empty tokens.
Checkpoint ImportCt2Model(const Ct2Directory& directory,
                          const std::string& model_dir);

// ImportCt2Model of the directory `model_dir`, as its users lay it out: a
// SentencePiece model beside model.bin (one for both sides:
// sentencepiece.bpe.model, sentencepiece.model or spm.model; or OPUS-MT's
// source.spm and target.spm) becomes the checkpoint's, so that it
// translates text; without one it takes pieces (fanyi-eval --tokens) or
// words. Throws std::runtime_error naming the files for half of a pair, or
// more than one choice.
Checkpoint ImportCt2Directory(const std::string& model_dir);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CTRANSLATE2_IMPORT_H_
