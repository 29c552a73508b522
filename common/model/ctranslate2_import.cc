#include "common/model/ctranslate2_import.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/model/ctranslate2_transformer.h"
#include "common/model/ctranslate2_vocabulary_map.h"
#include "common/model/ctranslate2_weights.h"
#include "common/model/small_file.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

// Rows of the position table for a model that stores none: CTranslate2
// computes any length; fanyi caps sources and targets at the table's rows.
constexpr int64_t kComputedPositions = 1024;

// The settings fanyi keeps once for both stacks must agree.
void CheckStacksAgree(const Ct2TransformerOptions& options,
                      const std::string& model_dir) {
  const Ct2StackOptions& e = options.encoder;
  const Ct2StackOptions& d = options.decoder;
  for (const auto& [same, what] :
       {std::pair{e.heads == d.heads, "attention heads"},
        std::pair{e.activation == d.activation, "activations"},
        std::pair{e.scale_embeddings == d.scale_embeddings,
                  "embedding scaling (scale_embeddings)"},
        std::pair{e.final_norm == d.final_norm, "final layer norms"},
        std::pair{e.layernorm_embedding == d.layernorm_embedding,
                  "embedding layer norms (layernorm_embedding)"}}) {
    if (!same) {
      throw std::runtime_error(model_dir +
                               "/model.bin: encoder and decoder differ in " +
                               what + ", which fanyi keeps once for both");
    }
  }
}

Activation FanyiActivation(Ct2Activation activation) {
  switch (activation) {
    case Ct2Activation::kRelu:
      return Activation::kRelu;
    case Ct2Activation::kGeluTanh:
      return Activation::kGeluTanh;
    case Ct2Activation::kSwish:
      return Activation::kSwish;
    case Ct2Activation::kGelu:
      return Activation::kGelu;
  }
  return Activation::kRelu;
}

// The one position table of both stacks: stored ones must be the same, and
// a stored one must be what CTranslate2 computes for a stack that stores
// none.
torch::Tensor PositionTable(const Ct2Directory& directory,
                            const std::string& model_dir) {
  const Ct2TransformerOptions& options = directory.options;
  std::vector<torch::Tensor> stored;
  for (const auto& [stack, stack_options] :
       {std::pair{"encoder", &options.encoder},
        std::pair{"decoder", &options.decoder}}) {
    if (stack_options->stored_positions > 0) {
      stored.push_back(directory.model.Float(std::string(stack) +
                                             "/position_encodings/encodings"));
    }
  }
  if (stored.empty()) {
    return Ct2SinusoidalPositions(kComputedPositions, options.d_model);
  }
  const torch::Tensor& table = stored.front();
  const bool agree =
      stored.size() == 2
          ? stored[0].sizes() == stored[1].sizes() &&
                at::equal(stored[0], stored[1])
          : at::allclose(table,
                         Ct2SinusoidalPositions(table.size(0), table.size(1)),
                         0, 1e-5);
  if (!agree) {
    throw std::runtime_error(model_dir +
                             "/model.bin: the encoder's and the decoder's "
                             "position tables differ; fanyi keeps one");
  }
  return table;
}

ModelConfig ImportedConfig(const Ct2TransformerOptions& options,
                           int64_t source_rows, int64_t target_rows,
                           int64_t positions) {
  ModelConfig config;
  config.source_vocab_size = source_rows;
  config.target_vocab_size = target_rows;
  config.encoder_layers = options.encoder.layers;
  config.decoder_layers = options.decoder.layers;
  config.d_model = options.d_model;
  config.d_ff = options.d_ff;
  config.heads = options.encoder.heads;
  config.max_positions = positions;
  config.layer_norm_epsilon = options.layer_norm_epsilon;
  config.tie_target_embeddings = options.tied_projection;
  config.pre_norm = options.encoder.pre_norm;
  config.activation = FanyiActivation(options.encoder.activation);
  config.scale_embeddings = options.encoder.scale_embeddings;
  config.final_norms = options.encoder.final_norm;
  config.embedding_norms = options.encoder.layernorm_embedding;
  config.share_embeddings = options.shared_embeddings;
  // The rows fanyi adds need a bias to be never predicted.
  config.generator_bias = options.tied_projection;
  config.source_eos = options.add_source_eos;
  config.alignment_layer = options.decoder.alignment_layer;
  config.alignment_heads = options.decoder.alignment_heads;
  return config;
}

// ImportedConfig, checked: what fanyi's Transformer cannot take (an odd
// d_model, a position table of one row) is refused naming the directory.
ModelConfig CheckedConfig(const Ct2TransformerOptions& options,
                          int64_t source_rows, int64_t target_rows,
                          int64_t positions, const std::string& model_dir) {
  ModelConfig config =
      ImportedConfig(options, source_rows, target_rows, positions);
  try {
    config.Validate();
  } catch (const std::invalid_argument& error) {
    throw std::runtime_error(model_dir + "/model.bin: " + error.what());
  }
  return config;
}

// The SentencePiece models a CTranslate2 directory may hold beside the
// model, as its users lay them out: one for both sides (the names of
// Transformers' M2M-100 and NLLB tokenizers, and the usual ones), or
// OPUS-MT's source.spm and target.spm. Throws std::runtime_error, naming
// the files, for half of a pair or more than one choice.
void AttachSubwordModels(const std::string& model_dir, Checkpoint* checkpoint) {
  const fs::path directory(model_dir);
  std::error_code error;
  const auto holds = [&](const char* name) {
    return fs::is_regular_file(directory / name, error);
  };
  std::vector<std::string> choices;
  for (const char* name :
       {"sentencepiece.bpe.model", "sentencepiece.model", "spm.model"}) {
    if (holds(name)) choices.push_back(name);
  }
  const bool source = holds("source.spm");
  const bool target = holds("target.spm");
  if (source != target) {
    throw std::runtime_error(
        model_dir + " holds " + (source ? "source.spm" : "target.spm") +
        " without " + (source ? "target.spm" : "source.spm") +
        ": a model with a SentencePiece model per side needs both");
  }
  if (source) choices.push_back("source.spm and target.spm");
  if (choices.empty()) return;
  if (choices.size() > 1) {
    std::string names;
    for (const std::string& choice : choices) {
      names += (names.empty() ? "" : ", ") + choice;
    }
    throw std::runtime_error(model_dir +
                             " holds several SentencePiece "
                             "models (" +
                             names + "); keep the model's own");
  }
  if (source) {
    checkpoint->source_subwords =
        ReadSubwordModelFile((directory / "source.spm").string());
    checkpoint->target_subwords =
        ReadSubwordModelFile((directory / "target.spm").string());
  } else {
    checkpoint->source_subwords =
        ReadSubwordModelFile((directory / choices.front()).string());
    checkpoint->target_subwords = checkpoint->source_subwords;
  }
}

}  // namespace

bool IsCt2ModelDirectory(const std::string& path) {
  std::error_code error;
  return fs::is_regular_file(fs::path(path) / "model.bin", error) &&
         !fs::exists(fs::path(path) / "model.pt", error);
}

Checkpoint ImportCt2Model(const Ct2Directory& directory,
                          const std::string& model_dir) {
  const Ct2TransformerOptions& options = directory.options;
  CheckStacksAgree(options, model_dir);
  if (options.add_source_bos) {
    throw std::runtime_error(model_dir +
                             "/config.json: add_source_bos (sources that "
                             "start with <s>) is not served");
  }
  if (!directory.decoder_start_id) {
    throw std::runtime_error(model_dir +
                             "/config.json: decoder_start_token is null "
                             "(each target starts from its prefix), which "
                             "is not served");
  }
  const std::string source_name =
      model_dir + (directory.vocabularies.shared ? "/shared_vocabulary"
                                                 : "/source_vocabulary");
  const std::string target_name =
      model_dir + (directory.vocabularies.shared ? "/shared_vocabulary"
                                                 : "/target_vocabulary");
  if (options.shared_embeddings &&
      directory.vocabularies.source != directory.vocabularies.target) {
    throw std::runtime_error(model_dir +
                             ": the encoder and decoder share embeddings "
                             "but not their vocabularies");
  }
  // Shared embeddings take one order: the target's.
  const Ct2VocabularyMap target = MapCt2Target(directory, target_name);
  const Ct2VocabularyMap source =
      options.shared_embeddings ? target : MapCt2Source(directory, source_name);

  torch::Tensor positions;
  try {
    positions = PositionTable(directory, model_dir);
  } catch (const std::invalid_argument& error) {  // An odd d_model.
    throw std::runtime_error(model_dir + "/model.bin: " + error.what());
  }
  Checkpoint checkpoint;
  // The directory's name ("dir/" normalizes to "dir/", whose filename is
  // empty), when it is text.
  const fs::path normal = fs::path(model_dir).lexically_normal();
  checkpoint.model_version =
      Utf8OrElse((normal.has_filename() ? normal.filename()
                                        : normal.parent_path().filename())
                     .string(),
                 "ctranslate2");
  // Beam search ranks as CTranslate2's translate_batch does by default.
  checkpoint.length_normalization = LengthNormalization::kCtranslate2;
  checkpoint.length_penalty = 1.0;
  // Its pieces are the model's own: no case is folded.
  checkpoint.source_case = WordCase::kKeep;
  checkpoint.target_case = WordCase::kKeep;
  checkpoint.source_vocabulary =
      Vocabulary(source.tokens, Vocabulary::SpecialNames::kModel);
  checkpoint.target_vocabulary =
      Vocabulary(target.tokens, Vocabulary::SpecialNames::kModel);
  checkpoint.model = Transformer(CheckedConfig(
      options, checkpoint.source_vocabulary.size(),
      checkpoint.target_vocabulary.size(), positions.size(0), model_dir));
  CopyCt2Weights(directory.model, options, source, target, positions,
                 *checkpoint.model);
  checkpoint.training = {
      {"imported_from",
       {{"format", "CTranslate2"},
        {"directory", Utf8OrElse(model_dir, "")},
        {"binary_version", directory.model.binary_version()},
        {"spec_revision", directory.model.spec_revision()}}}};
  return checkpoint;
}

Checkpoint ImportCt2Directory(const std::string& model_dir) {
  Checkpoint checkpoint =
      ImportCt2Model(ReadCt2Directory(model_dir), model_dir);
  AttachSubwordModels(model_dir, &checkpoint);
  return checkpoint;
}

}  // namespace fanyi
