#include "common/model/ctranslate2_import.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/model/small_file.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

// The output bias of rows fanyi adds: far enough below any real logit that
// their probability is 0 in float32, yet finite, so that a label-smoothed
// loss stays finite when an imported model is fine-tuned.
constexpr double kNeverPredicted = -10000.0;
// Rows of the position table for a model that stores none: CTranslate2
// computes any length; fanyi caps sources and targets at the table's rows.
constexpr int64_t kComputedPositions = 1024;

// One of fanyi's four special ids on one side: a CTranslate2 token moved
// there (keeping its string), or a row fanyi adds, of zeros or a copy of
// CTranslate2's row `copy_of`, named `name`. The names hold a space, which
// no token has (MapSide refuses them), so that no tokenizer and no line of
// pieces ever reaches an added row.
struct Special {
  std::optional<int64_t> moved;
  int64_t copy_of = -1;
  const char* name = "";
};
constexpr const char* kAddedPad = "<fanyi pad>";
constexpr const char* kAddedStart = "<fanyi start>";
constexpr const char* kAddedEnd = "<fanyi end>";

// One side's vocabulary in fanyi's order and where each id's row comes
// from.
struct SideMap {
  std::vector<std::string> tokens;
  std::vector<int64_t> rows;   // Per fanyi id: CTranslate2's row, -1: zeros.
  std::vector<int64_t> added;  // The fanyi ids of rows fanyi adds.
};

SideMap MapSide(const std::vector<std::string>& ct2_tokens,
                const std::array<Special, 4>& specials,
                const std::string& vocabulary_name) {
  std::unordered_map<std::string, int64_t> seen;
  for (size_t i = 0; i < ct2_tokens.size(); ++i) {
    if (ct2_tokens[i].empty()) {
      throw std::runtime_error(vocabulary_name + ": entry " +
                               std::to_string(i) + " is an empty token");
    }
    // Pieces travel as lines of space-separated tokens (fanyi-eval
    // --tokens, CTranslate2's own tools); no tokenizer makes these.
    for (const char c : ct2_tokens[i]) {
      if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
        throw std::runtime_error(
            vocabulary_name + ": entry " + std::to_string(i) +
            " holds a space or a control character (byte " +
            std::to_string(static_cast<unsigned char>(c)) +
            "), which no tokenizer makes");
      }
    }
    const auto [at, inserted] =
        seen.emplace(ct2_tokens[i], static_cast<int64_t>(i));
    if (!inserted) {
      throw std::runtime_error(
          vocabulary_name + ": entry " + std::to_string(i) + " repeats \"" +
          ct2_tokens[i] + "\" (entry " + std::to_string(at->second) + ")");
    }
  }
  SideMap map;
  std::unordered_set<int64_t> moved;
  for (size_t id = 0; id < specials.size(); ++id) {
    const Special& special = specials[id];
    if (special.moved) {
      if (!moved.insert(*special.moved).second) {
        throw std::runtime_error(vocabulary_name + ": \"" +
                                 ct2_tokens[*special.moved] +
                                 "\" is named for two special tokens");
      }
      map.tokens.push_back(ct2_tokens[*special.moved]);
      map.rows.push_back(*special.moved);
      continue;
    }
    map.tokens.push_back(special.name);
    map.rows.push_back(special.copy_of);
    map.added.push_back(static_cast<int64_t>(id));
  }
  for (size_t i = 0; i < ct2_tokens.size(); ++i) {
    if (moved.count(static_cast<int64_t>(i)) != 0) continue;
    map.tokens.push_back(ct2_tokens[i]);
    map.rows.push_back(static_cast<int64_t>(i));
  }
  return map;
}

std::optional<int64_t> Find(const std::vector<std::string>& tokens,
                            const std::string& token) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == token) return static_cast<int64_t>(i);
  }
  return std::nullopt;
}

// The target side: a padding row added, the model's unk, its start token
// (a row of its own when it is a token of its own, else an added copy, or
// zeros for a zero first embedding), its eos.
SideMap MapTarget(const Ct2Directory& directory, const std::string& name) {
  const int64_t start = *directory.decoder_start_id;
  Special start_row{std::nullopt, start, kAddedStart};
  if (directory.options.decoder.start_from_zero_embedding) {
    start_row.copy_of = -1;
  } else if (start != directory.target_eos_id &&
             start != directory.target_unk_id) {
    start_row.moved = start;
  }
  return MapSide(
      directory.vocabularies.target,
      {Special{std::nullopt, -1, kAddedPad}, Special{directory.target_unk_id},
       start_row, Special{directory.target_eos_id}},
      name);
}

// The source side: a padding row added, the model's unk, and its bos and
// eos tokens where the vocabulary has them (zero rows where it has not).
SideMap MapSource(const Ct2Directory& directory, const std::string& name) {
  const std::vector<std::string>& tokens = directory.vocabularies.source;
  const Ct2TransformerOptions& options = directory.options;
  auto special = [&](const std::string& token, const char* name) {
    Special row{std::nullopt, -1, name};
    std::optional<int64_t> id = Find(tokens, token);
    if (id && *id != directory.source_unk_id) row.moved = id;
    return row;
  };
  Special bos = special(options.bos_token, kAddedStart);
  Special eos = special(options.eos_token, kAddedEnd);
  if (bos.moved && bos.moved == eos.moved) bos.moved.reset();
  return MapSide(tokens,
                 {Special{std::nullopt, -1, kAddedPad},
                  Special{directory.source_unk_id}, bos, eos},
                 name);
}

// `table` [ct2_rows, ...] in fanyi's order: [fanyi_rows, ...], zeros where
// fanyi adds a row of zeros.
torch::Tensor Reordered(const torch::Tensor& table, const SideMap& map) {
  std::vector<int64_t> rows = map.rows;
  std::vector<int64_t> zero_rows;
  for (size_t id = 0; id < rows.size(); ++id) {
    if (rows[id] < 0) {
      rows[id] = 0;
      zero_rows.push_back(static_cast<int64_t>(id));
    }
  }
  torch::Tensor reordered = table.index_select(0, at::tensor(rows, at::kLong));
  if (!zero_rows.empty()) {
    reordered.index_fill_(0, at::tensor(zero_rows, at::kLong), 0);
  }
  return reordered;
}

// Copies CTranslate2's variables into a fanyi Transformer's parameters.
class WeightCopier {
 public:
  WeightCopier(const Ct2ModelFile& model, TransformerImpl& transformer)
      : model_(model) {
    for (auto& parameter : transformer.named_parameters()) {
      tensors_.emplace(parameter.key(), parameter.value());
    }
    for (auto& buffer : transformer.named_buffers()) {
      tensors_.emplace(buffer.key(), buffer.value());
    }
  }

  void Set(const std::string& name, const torch::Tensor& value) {
    torch::Tensor& tensor = tensors_.at(name);
    if (tensor.sizes() != value.sizes()) {
      throw std::logic_error("import: " + name + " has another shape");
    }
    tensor.copy_(value);
  }

  torch::Tensor Float(const std::string& name) const {
    return model_.Float(name);
  }

  // CTranslate2's linear `ct2` [rows, columns] as the fanyi linears
  // `names`, each taking its share of the rows (a fused projection is
  // split); an absent bias is zeros.
  void Linear(const std::string& ct2, const std::vector<std::string>& names) {
    const torch::Tensor weight = model_.Float(ct2 + "/weight");
    const torch::Tensor bias = model_.Has(ct2 + "/bias")
                                   ? model_.Float(ct2 + "/bias")
                                   : at::zeros({weight.size(0)}, at::kFloat);
    const auto parts = static_cast<int64_t>(names.size());
    const std::vector<torch::Tensor> weights = weight.chunk(parts, 0);
    const std::vector<torch::Tensor> biases = bias.chunk(parts, 0);
    for (int64_t i = 0; i < parts; ++i) {
      Set(names[i] + ".weight", weights[i]);
      Set(names[i] + ".bias", biases[i]);
    }
  }

  void LayerNorm(const std::string& ct2, const std::string& name) {
    Set(name + ".weight", model_.Float(ct2 + "/gamma"));
    Set(name + ".bias", model_.Float(ct2 + "/beta"));
  }

 private:
  const Ct2ModelFile& model_;
  std::unordered_map<std::string, torch::Tensor> tensors_;
};

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

// One layer, CTranslate2's `ct2` into fanyi's `own`: its self-attention
// (whose norm fanyi calls `self_norm`), a decoder layer's cross-attention,
// and its feed-forward block.
void CopyLayer(const std::string& ct2, const std::string& own,
               const std::string& self_norm, bool decoder, WeightCopier& copy) {
  copy.LayerNorm(ct2 + "/self_attention/layer_norm", own + "." + self_norm);
  copy.Linear(ct2 + "/self_attention/linear_0",
              {own + ".self_attention.query_projection",
               own + ".self_attention.key_projection",
               own + ".self_attention.value_projection"});
  copy.Linear(ct2 + "/self_attention/linear_1",
              {own + ".self_attention.output_projection"});
  if (decoder) {
    copy.LayerNorm(ct2 + "/attention/layer_norm",
                   own + ".cross_attention_norm");
    copy.Linear(ct2 + "/attention/linear_0",
                {own + ".cross_attention.query_projection"});
    copy.Linear(ct2 + "/attention/linear_1",
                {own + ".cross_attention.key_projection",
                 own + ".cross_attention.value_projection"});
    copy.Linear(ct2 + "/attention/linear_2",
                {own + ".cross_attention.output_projection"});
  }
  copy.LayerNorm(ct2 + "/ffn/layer_norm", own + ".feed_forward_norm");
  copy.Linear(ct2 + "/ffn/linear_0", {own + ".feed_forward.inner"});
  copy.Linear(ct2 + "/ffn/linear_1", {own + ".feed_forward.outer"});
}

void CopyLayers(const Ct2TransformerOptions& options, WeightCopier& copy) {
  for (int64_t i = 0; i < options.encoder.layers; ++i) {
    CopyLayer("encoder/layer_" + std::to_string(i),
              "encoder_layers." + std::to_string(i), "attention_norm", false,
              copy);
  }
  for (int64_t i = 0; i < options.decoder.layers; ++i) {
    CopyLayer("decoder/layer_" + std::to_string(i),
              "decoder_layers." + std::to_string(i), "self_attention_norm",
              true, copy);
  }
}

// The embeddings, their norms, the final norms and the generator.
void CopyEnds(const Ct2TransformerOptions& options, const SideMap& source,
              const SideMap& target, WeightCopier& copy) {
  copy.Set("source_embedding.weight",
           Reordered(copy.Float("encoder/embeddings_0/weight"), source));
  if (!options.shared_embeddings) {
    copy.Set("target_embedding.weight",
             Reordered(copy.Float("decoder/embeddings/weight"), target));
  }
  if (options.encoder.layernorm_embedding) {
    copy.LayerNorm("encoder/layernorm_embedding", "source_embedding_norm");
    copy.LayerNorm("decoder/layernorm_embedding", "target_embedding_norm");
  }
  if (options.encoder.final_norm) {
    copy.LayerNorm("encoder/layer_norm", "encoder_norm");
    copy.LayerNorm("decoder/layer_norm", "decoder_norm");
  }
  torch::Tensor bias =
      options.projection_bias
          ? Reordered(copy.Float("decoder/projection/bias"), target)
          : at::zeros({static_cast<int64_t>(target.rows.size())}, at::kFloat);
  for (int64_t id : target.added) bias[id] = kNeverPredicted;
  if (options.tied_projection) {
    copy.Set("generator_bias", bias);
  } else {
    copy.Set("generator.weight",
             Reordered(copy.Float("decoder/projection/weight"), target));
    copy.Set("generator.bias", bias);
  }
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
  const SideMap target = MapTarget(directory, target_name);
  const SideMap source =
      options.shared_embeddings ? target : MapSource(directory, source_name);

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
  {
    at::NoGradGuard no_grad;
    WeightCopier copy(directory.model, *checkpoint.model);
    copy.Set("positions", positions);
    CopyEnds(options, source, target, copy);
    CopyLayers(options, copy);
  }
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
