#include "common/model/ctranslate2_transformer.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/sin.h>
#include <sys/stat.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "common/model/small_file.h"

namespace fanyi {
namespace {

constexpr int64_t kMaxVocabularyBytes = int64_t{64} << 20;
constexpr int64_t kMaxVocabularyTokens = int64_t{1} << 22;
constexpr int64_t kMaxConfigBytes = int64_t{1} << 20;
constexpr int64_t kMaxLayers = 256;

// Variables that show an option fanyi does not serve, by the last part of
// their name, and the option's name in CTranslate2's converters.
const std::map<std::string, std::string>& RefusedParts() {
  static const auto* parts = new std::map<std::string, std::string>{
      {"relative_position_keys", "relative positions (max_relative_positions)"},
      {"relative_position_values",
       "relative positions (max_relative_positions)"},
      {"relative_attention_bias", "relative attention bias (T5)"},
      {"relative_attention_max_distance", "relative attention bias (T5)"},
      {"linear_0_noact", "gated feed-forward layers (ffn_glu)"},
      {"num_heads_kv", "multi-query or grouped-query attention"},
      {"rotary_dim", "rotary positions"},
      {"rotary_interleave", "rotary positions"},
      {"embeddings_1", "several source embeddings (source features)"},
      {"project_in", "projections around the decoder (project_in_out)"},
      {"project_out", "projections around the decoder (project_in_out)"},
      {"parallel_residual", "parallel residual layers"},
      {"q_norm", "normalized queries and keys (qk_norm)"},
      {"k_norm", "normalized queries and keys (qk_norm)"},
      {"post_attention_layer_norm", "pre- and post-layer norms"},
  };
  return *parts;
}

std::string ActivationName(int64_t activation) {
  static const char* const kNames[] = {"ReLU",   "GELU (tanh)",    "Swish",
                                       "GELU",   "GELU (sigmoid)", "Tanh",
                                       "Sigmoid"};
  return activation >= 0 && activation < 7 ? kNames[activation]
                                           : std::to_string(activation);
}

// Reads a model.bin's variables by name, marks each one read, and says what
// is left: a variable nobody read is an option fanyi does not serve.
class VariableReader {
 public:
  explicit VariableReader(const Ct2ModelFile& model) : model_(model) {}

  [[noreturn]] void Fail(const std::string& what) const {
    throw std::runtime_error(model_.name() + ": " + what);
  }

  bool Has(const std::string& name) const { return model_.Has(name); }

  // The variable, marked read with its scale; throws when missing.
  const Ct2Variable& Take(const std::string& name) {
    const Ct2Variable& variable = model_.Get(name);
    read_.insert(&variable);
    if (model_.Has(name + "_scale")) read_.insert(&model_.Get(name + "_scale"));
    return variable;
  }

  // A variable of exactly `shape`.
  const Ct2Variable& Shaped(const std::string& name,
                            const std::vector<int64_t>& shape) {
    const Ct2Variable& variable = Take(name);
    if (variable.shape != shape) {
      Fail("variable \"" + name + "\" has shape " + ShapeText(variable.shape) +
           ", " + ShapeText(shape) + " expected");
    }
    return variable;
  }

  // A linear layer: its weight [rows, columns] and its bias [rows], if any.
  void Linear(const std::string& name, int64_t rows, int64_t columns) {
    Shaped(name + "/weight", {rows, columns});
    if (Has(name + "/bias")) Shaped(name + "/bias", {rows});
  }

  // A layer norm: gamma and beta (an RMS norm has no beta).
  void LayerNorm(const std::string& name, int64_t size) {
    if (Has(name + "/gamma") && !Has(name + "/beta")) {
      Fail("variable \"" + name +
           "/gamma\" has no beta: RMS norms (rms_norm) are not served");
    }
    Shaped(name + "/gamma", {size});
    Shaped(name + "/beta", {size});
  }

  // A scalar integer flag, `fallback` when absent.
  int64_t Flag(const std::string& name, int64_t fallback) {
    if (!Has(name)) return fallback;
    Take(name);
    return *model_.Integer(name);
  }

  // A flag that must have one value (an option fanyi does not serve
  // otherwise).
  void Expect(const std::string& name, int64_t value,
              const std::string& option) {
    if (Flag(name, value) != value) {
      Fail("variable \"" + name + "\" turns on " + option +
           ", which fanyi does not serve");
    }
  }

  // Fails for the first variable no one read.
  void FailOnUnread() const {
    for (const std::string& name : model_.VariableNames()) {
      if (read_.count(&model_.Get(name)) != 0) continue;
      std::string part = name;
      for (size_t start = 0; start < name.size();) {
        const size_t end = name.find('/', start);
        const std::string piece =
            name.substr(start, end == std::string::npos ? end : end - start);
        if (auto refused = RefusedParts().find(piece);
            refused != RefusedParts().end()) {
          Fail("variable \"" + name + "\" is part of " + refused->second +
               ", which fanyi does not serve");
        }
        if (end == std::string::npos) break;
        start = end + 1;
      }
      Fail("variable \"" + name +
           "\" is not part of a Transformer fanyi serves");
    }
  }

 private:
  static std::string ShapeText(const std::vector<int64_t>& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
      text += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return text + "]";
  }

  const Ct2ModelFile& model_;
  std::set<const Ct2Variable*> read_;
};

// The layers, flags and input layers of "encoder" or "decoder".
Ct2StackOptions ReadStack(VariableReader& reader, const std::string& stack,
                          int64_t d_model, int64_t d_ff) {
  Ct2StackOptions options;
  while (reader.Has(stack + "/layer_" + std::to_string(options.layers) +
                    "/ffn/linear_0/weight")) {
    if (++options.layers > kMaxLayers) {
      reader.Fail(stack + " has more than " + std::to_string(kMaxLayers) +
                  " layers");
    }
  }
  if (options.layers == 0) reader.Fail(stack + " has no layer_0");
  options.heads = reader.Flag(stack + "/num_heads", 0);
  if (options.heads <= 0 || d_model % options.heads != 0) {
    reader.Fail(stack + "/num_heads is " + std::to_string(options.heads) +
                ", which does not divide d_model " + std::to_string(d_model));
  }
  options.pre_norm = reader.Flag(stack + "/pre_norm", 1) != 0;
  const int64_t activation = reader.Flag(stack + "/activation", 0);
  if (activation < 0 || activation > 3) {
    reader.Fail(stack + "/activation is " + ActivationName(activation) +
                ", which fanyi does not serve (ReLU, GELU or Swish)");
  }
  options.activation = static_cast<Ct2Activation>(activation);
  options.scale_embeddings = reader.Flag(stack + "/scale_embeddings", 1) != 0;
  reader.Expect(stack + "/multi_query_attention", 0, "multi-query attention");
  reader.Expect(stack + "/alibi", 0, "ALiBi positions");
  if (stack == "decoder") {
    options.start_from_zero_embedding =
        reader.Flag(stack + "/start_from_zero_embedding", 0) != 0;
  } else {
    reader.Expect(stack + "/start_from_zero_embedding", 0,
                  "an encoder that starts from a zero embedding");
  }
  options.alignment_layer = reader.Flag(stack + "/alignment_layer", -1);
  options.alignment_heads = reader.Flag(stack + "/alignment_heads", 1);
  // Read and left unused: how several embeddings merge (there is one).
  for (const char* unused :
       {"/embeddings_merge", "/alibi_use_positive_positions", "/scale_alibi"}) {
    reader.Flag(stack + unused, 0);
  }
  options.final_norm = reader.Has(stack + "/layer_norm/gamma");
  if (options.final_norm) reader.LayerNorm(stack + "/layer_norm", d_model);
  options.layernorm_embedding =
      reader.Has(stack + "/layernorm_embedding/gamma");
  if (options.layernorm_embedding) {
    reader.LayerNorm(stack + "/layernorm_embedding", d_model);
  }
  const std::string positions = stack + "/position_encodings/encodings";
  if (reader.Has(positions)) {
    const Ct2Variable& table = reader.Take(positions);
    if (table.shape.size() != 2 || table.shape[1] != d_model ||
        table.shape[0] == 0) {
      reader.Fail("variable \"" + positions + "\" is not a table of d_model " +
                  std::to_string(d_model) + " columns");
    }
    options.stored_positions = table.shape[0];
  }
  const bool decoder = stack == "decoder";
  for (int64_t i = 0; i < options.layers; ++i) {
    const std::string layer = stack + "/layer_" + std::to_string(i);
    reader.LayerNorm(layer + "/self_attention/layer_norm", d_model);
    reader.Linear(layer + "/self_attention/linear_0", 3 * d_model, d_model);
    reader.Linear(layer + "/self_attention/linear_1", d_model, d_model);
    if (decoder) {
      reader.LayerNorm(layer + "/attention/layer_norm", d_model);
      reader.Linear(layer + "/attention/linear_0", d_model, d_model);
      reader.Linear(layer + "/attention/linear_1", 2 * d_model, d_model);
      reader.Linear(layer + "/attention/linear_2", d_model, d_model);
    }
    reader.LayerNorm(layer + "/ffn/layer_norm", d_model);
    reader.Linear(layer + "/ffn/linear_0", d_ff, d_model);
    reader.Linear(layer + "/ffn/linear_1", d_model, d_ff);
  }
  return options;
}

// config.json's settings into `options`; every key must be one fanyi knows.
void ReadConfig(const std::string& text, const std::string& name,
                Ct2TransformerOptions& options) {
  if (text.size() > size_t(kMaxConfigBytes)) {
    throw std::runtime_error(name + ": over " +
                             std::to_string(kMaxConfigBytes) + " bytes");
  }
  nlohmann::json config;
  std::set<std::string> top_keys;
  std::string repeated;
  try {
    // A key given twice would let the second silently win: refused.
    config = nlohmann::json::parse(
        text, [&](int depth, nlohmann::json::parse_event_t event,
                  nlohmann::json& parsed) {
          if (event == nlohmann::json::parse_event_t::key && depth == 1 &&
              !top_keys.insert(parsed.get<std::string>()).second &&
              repeated.empty()) {
            repeated = parsed.get<std::string>();
          }
          return true;
        });
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(name + ": not JSON: " + error.what());
  }
  if (!repeated.empty()) {
    throw std::runtime_error(name + ": \"" + repeated + "\" comes twice");
  }
  if (!config.is_object()) {
    throw std::runtime_error(name + ": not a JSON object");
  }
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw std::runtime_error(name + ": \"" + key + "\" " + what);
  };
  for (const auto& [key, value] : config.items()) {
    if (key == "unk_token" || key == "bos_token" || key == "eos_token") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        fail(key, "is not a token");
      }
      (key == "unk_token"   ? options.unk_token
       : key == "bos_token" ? options.bos_token
                            : options.eos_token) = value.get<std::string>();
    } else if (key == "decoder_start_token") {
      if (value.is_null()) {
        options.decoder_start_token.reset();
      } else if (value.is_string() && !value.get<std::string>().empty()) {
        options.decoder_start_token = value.get<std::string>();
      } else {
        fail(key, "is neither a token nor null");
      }
    } else if (key == "add_source_bos" || key == "add_source_eos") {
      if (!value.is_boolean()) fail(key, "is not true or false");
      (key == "add_source_bos" ? options.add_source_bos
                               : options.add_source_eos) = value.get<bool>();
    } else if (key == "layer_norm_epsilon") {
      if (value.is_null()) continue;
      if (!value.is_number() || !(value.get<double>() > 0) ||
          !(value.get<double>() < 1)) {
        fail(key, "is not a number in (0, 1)");
      }
      options.layer_norm_epsilon = value.get<double>();
    } else if (key == "multi_query_attention") {
      if (!value.is_boolean()) fail(key, "is not true or false");
      if (value.get<bool>()) fail(key, "is on, which fanyi does not serve");
    } else {
      fail(key, "is an option fanyi does not know");
    }
  }
}

// A JSON vocabulary, parsed without building a document: one array of
// strings, no deeper nesting, at most kMaxVocabularyTokens entries.
class VocabularyJson : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<std::string> tokens;
  std::string error;

  bool string(string_t& value) override {
    if (depth_ != 1) return Refuse("a string outside the array");
    if (tokens.size() == size_t(kMaxVocabularyTokens)) {
      return Refuse("over " + std::to_string(kMaxVocabularyTokens) + " tokens");
    }
    tokens.push_back(std::move(value));
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ != 0 || started_) return Refuse("not one array of strings");
    started_ = true;
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool null() override { return NotAString(); }
  bool boolean(bool) override { return NotAString(); }
  bool number_integer(number_integer_t) override { return NotAString(); }
  bool number_unsigned(number_unsigned_t) override { return NotAString(); }
  bool number_float(number_float_t, const string_t&) override {
    return NotAString();
  }
  bool binary(binary_t&) override { return NotAString(); }
  bool start_object(std::size_t) override { return NotAString(); }
  bool key(string_t&) override { return NotAString(); }
  bool end_object() override { return NotAString(); }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& exception) override {
    return Refuse("not JSON at byte " + std::to_string(position) + ": " +
                  exception.what());
  }

 private:
  bool NotAString() {
    return Refuse(depth_ == 0 ? "not an array"
                              : "entry " + std::to_string(tokens.size()) +
                                    " is not a string");
  }
  bool Refuse(const std::string& what) {
    if (error.empty()) error = what;
    return false;
  }

  int depth_ = 0;
  bool started_ = false;
};

bool IsFile(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
}

// `dir`/`stem`.json or .txt, whichever is there; "" for neither.
std::string VocabularyFile(const std::string& dir, const std::string& stem) {
  for (const char* extension : {".json", ".txt"}) {
    const std::string path = dir + "/" + stem + extension;
    if (IsFile(path)) return path;
  }
  return "";
}

}  // namespace

Ct2TransformerOptions ReadCt2TransformerOptions(
    const Ct2ModelFile& model, const std::string& config_json,
    const std::string& config_name) {
  VariableReader reader(model);
  if (model.spec().empty() || model.spec() == "TransformerBase" ||
      model.spec() == "TransformerBig") {
    reader.Fail("the spec is \"" + model.spec() +
                "\", as CTranslate2 1.x wrote; convert the model again with "
                "CTranslate2 2.0 or later");
  }
  if (model.spec() != "TransformerSpec") {
    reader.Fail("the spec is \"" + model.spec() +
                "\", not an encoder-decoder Transformer (TransformerSpec), "
                "the only kind fanyi serves");
  }
  Ct2TransformerOptions options;
  const Ct2Variable& source = reader.Take("encoder/embeddings_0/weight");
  if (source.shape.size() != 2 || source.shape[0] == 0 ||
      source.shape[1] == 0) {
    reader.Fail("variable \"encoder/embeddings_0/weight\" is not a matrix");
  }
  options.source_vocabulary_size = source.shape[0];
  options.d_model = source.shape[1];
  const Ct2Variable& ffn = reader.Take("encoder/layer_0/ffn/linear_0/weight");
  if (ffn.shape.size() != 2 || ffn.shape[0] == 0) {
    reader.Fail(
        "variable \"encoder/layer_0/ffn/linear_0/weight\" is not a "
        "matrix");
  }
  options.d_ff = ffn.shape[0];
  const Ct2Variable& target = reader.Take("decoder/embeddings/weight");
  if (target.shape.size() != 2 || target.shape[0] == 0 ||
      target.shape[1] != options.d_model) {
    reader.Fail(
        "variable \"decoder/embeddings/weight\" is not a matrix of "
        "d_model " +
        std::to_string(options.d_model) + " columns");
  }
  options.target_vocabulary_size = target.shape[0];
  options.shared_embeddings = &source == &target;
  const Ct2Variable& projection =
      reader.Shaped("decoder/projection/weight",
                    {options.target_vocabulary_size, options.d_model});
  options.tied_projection = &projection == &target;
  options.projection_bias = reader.Has("decoder/projection/bias");
  if (options.projection_bias) {
    reader.Shaped("decoder/projection/bias", {options.target_vocabulary_size});
  }
  options.encoder = ReadStack(reader, "encoder", options.d_model, options.d_ff);
  options.decoder = ReadStack(reader, "decoder", options.d_model, options.d_ff);
  if (options.encoder.pre_norm != options.decoder.pre_norm) {
    reader.Fail("the encoder is " +
                std::string(options.encoder.pre_norm ? "pre" : "post") +
                "-norm and the decoder is not");
  }
  if (config_json.empty()) {
    // Older models kept their settings in model.bin.
    for (auto [name, token] : {std::pair{"unk_token", &options.unk_token},
                               std::pair{"bos_token", &options.bos_token},
                               std::pair{"eos_token", &options.eos_token}}) {
      if (auto text = model.Text(name)) {
        reader.Take(name);
        *token = *text;
      }
    }
    options.add_source_bos = reader.Flag("with_source_bos", 0) != 0;
    options.add_source_eos = reader.Flag("with_source_eos", 0) != 0;
    if (reader.Flag("user_decoder_start_tokens", 0) != 0) {
      options.decoder_start_token.reset();
    }
  } else {
    ReadConfig(config_json, config_name, options);
  }
  reader.FailOnUnread();
  return options;
}

torch::Tensor Ct2SinusoidalPositions(int64_t rows, int64_t d_model) {
  if (d_model < 4 || d_model % 2 != 0 || rows < 0) {
    throw std::invalid_argument(
        "CTranslate2's position table needs an even d_model of at least 4 "
        "and rows >= 0 (d_model " +
        std::to_string(d_model) + ", rows " + std::to_string(rows) + ")");
  }
  const int64_t half = d_model / 2;
  const float increment = std::log(10000.f) / static_cast<float>(half - 1);
  // [half], then [rows, half]
  const torch::Tensor timescales =
      at::exp(at::arange(half, at::kFloat) * -increment);
  const torch::Tensor times =
      at::arange(1, rows + 1, at::kFloat).unsqueeze(1) * timescales;
  return at::cat({at::sin(times), at::cos(times)}, 1);
}

std::vector<std::string> ReadCt2Vocabulary(const std::string& path) {
  const std::string bytes = ReadSmallFile(path, kMaxVocabularyBytes);
  std::vector<std::string> tokens;
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    VocabularyJson json;
    if (!nlohmann::json::sax_parse(bytes, &json) || !json.error.empty()) {
      throw std::runtime_error(path + ": " +
                               (json.error.empty() ? "not JSON" : json.error));
    }
    tokens = std::move(json.tokens);
  } else {
    for (size_t start = 0; start < bytes.size();) {
      if (tokens.size() == size_t(kMaxVocabularyTokens)) {
        throw std::runtime_error(path + ": over " +
                                 std::to_string(kMaxVocabularyTokens) +
                                 " tokens");
      }
      size_t end = bytes.find('\n', start);
      if (end == std::string::npos) end = bytes.size();
      tokens.push_back(bytes.substr(start, end - start));
      start = end + 1;
    }
  }
  if (tokens.empty()) throw std::runtime_error(path + ": no tokens");
  return tokens;
}

Ct2Vocabularies ReadCt2Vocabularies(const std::string& model_dir) {
  Ct2Vocabularies vocabularies;
  if (!VocabularyFile(model_dir, "source_1_vocabulary").empty()) {
    throw std::runtime_error(model_dir +
                             ": source_1_vocabulary: several source embeddings "
                             "(source features) are not served");
  }
  if (const std::string shared = VocabularyFile(model_dir, "shared_vocabulary");
      !shared.empty()) {
    vocabularies.source = ReadCt2Vocabulary(shared);
    vocabularies.target = vocabularies.source;
    vocabularies.shared = true;
    return vocabularies;
  }
  const std::string source = VocabularyFile(model_dir, "source_vocabulary");
  const std::string target = VocabularyFile(model_dir, "target_vocabulary");
  if (source.empty() || target.empty()) {
    throw std::runtime_error(
        model_dir +
        ": no vocabularies (shared_vocabulary.json or .txt, or "
        "source_vocabulary and target_vocabulary)");
  }
  vocabularies.source = ReadCt2Vocabulary(source);
  vocabularies.target = ReadCt2Vocabulary(target);
  return vocabularies;
}

namespace {

// The id of `token` in `vocabulary` (the first, as CTranslate2 takes it);
// throws naming the file, the setting and the token when it is not there.
int64_t TokenId(const std::vector<std::string>& vocabulary,
                const std::string& token, const std::string& setting,
                const std::string& vocabulary_name) {
  for (size_t id = 0; id < vocabulary.size(); ++id) {
    if (vocabulary[id] == token) return static_cast<int64_t>(id);
  }
  throw std::runtime_error(vocabulary_name + ": has no \"" + token +
                           "\", which config.json names as " + setting);
}

}  // namespace

Ct2Directory ReadCt2Directory(const std::string& model_dir) {
  const std::string config_path = model_dir + "/config.json";
  const std::string config =
      IsFile(config_path) ? ReadSmallFile(config_path, kMaxConfigBytes) : "";
  Ct2ModelFile model = Ct2ModelFile::Open(model_dir + "/model.bin");
  Ct2TransformerOptions options =
      ReadCt2TransformerOptions(model, config, config_path);
  Ct2Vocabularies vocabularies = ReadCt2Vocabularies(model_dir);
  const std::string source_name =
      model_dir +
      (vocabularies.shared ? "/shared_vocabulary" : "/source_vocabulary");
  const std::string target_name =
      model_dir +
      (vocabularies.shared ? "/shared_vocabulary" : "/target_vocabulary");
  for (const auto& [tokens, rows, name, side] :
       {std::tuple{&vocabularies.source, options.source_vocabulary_size,
                   source_name, "encoder"},
        std::tuple{&vocabularies.target, options.target_vocabulary_size,
                   target_name, "decoder"}}) {
    if (static_cast<int64_t>(tokens->size()) != rows) {
      throw std::runtime_error(name + ": " + std::to_string(tokens->size()) +
                               " tokens for the " + std::to_string(rows) +
                               " rows of model.bin's " + side + " embeddings");
    }
  }
  Ct2Directory directory{std::move(model), std::move(options),
                         std::move(vocabularies)};
  const Ct2TransformerOptions& o = directory.options;
  const Ct2Vocabularies& v = directory.vocabularies;
  directory.source_unk_id =
      TokenId(v.source, o.unk_token, "unk_token", source_name);
  if (o.add_source_bos) {
    directory.source_bos_id =
        TokenId(v.source, o.bos_token, "bos_token", source_name);
  }
  if (o.add_source_eos) {
    directory.source_eos_id =
        TokenId(v.source, o.eos_token, "eos_token", source_name);
  }
  directory.target_unk_id =
      TokenId(v.target, o.unk_token, "unk_token", target_name);
  directory.target_eos_id =
      TokenId(v.target, o.eos_token, "eos_token", target_name);
  if (o.decoder_start_token) {
    directory.decoder_start_id = TokenId(v.target, *o.decoder_start_token,
                                         "decoder_start_token", target_name);
  }
  return directory;
}

}  // namespace fanyi
