#include "common/model/ctranslate2_transformer.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/sin.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <utility>

#include "common/model/ctranslate2_variable_reader.h"

namespace fanyi {
namespace {

constexpr int64_t kMaxLayers = 256;

std::string ActivationName(int64_t activation) {
  static const char* const kNames[] = {"ReLU",   "GELU (tanh)",    "Swish",
                                       "GELU",   "GELU (sigmoid)", "Tanh",
                                       "Sigmoid"};
  return activation >= 0 && activation < 7 ? kNames[activation]
                                           : std::to_string(activation);
}

// The layers, flags and input layers of "encoder" or "decoder".
Ct2StackOptions ReadStack(Ct2VariableReader& reader, const std::string& stack,
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
  if (text.size() > size_t(kMaxCt2ConfigBytes)) {
    throw std::runtime_error(name + ": over " +
                             std::to_string(kMaxCt2ConfigBytes) + " bytes");
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

}  // namespace

Ct2TransformerOptions ReadCt2TransformerOptions(
    const Ct2ModelFile& model, const std::string& config_json,
    const std::string& config_name) {
  Ct2VariableReader reader(model);
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

}  // namespace fanyi
