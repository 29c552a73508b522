#include "common/model/ctranslate2_variable_reader.h"

#include <map>
#include <stdexcept>

namespace fanyi {
namespace {

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

}  // namespace

void Ct2VariableReader::Fail(const std::string& what) const {
  throw std::runtime_error(model_.name() + ": " + what);
}

const Ct2Variable& Ct2VariableReader::Take(const std::string& name) {
  const Ct2Variable& variable = model_.Get(name);
  read_.insert(&variable);
  if (model_.Has(name + "_scale")) read_.insert(&model_.Get(name + "_scale"));
  return variable;
}

const Ct2Variable& Ct2VariableReader::Shaped(
    const std::string& name, const std::vector<int64_t>& shape) {
  const Ct2Variable& variable = Take(name);
  if (variable.shape != shape) {
    Fail("variable \"" + name + "\" has shape " + ShapeText(variable.shape) +
         ", " + ShapeText(shape) + " expected");
  }
  return variable;
}

void Ct2VariableReader::Linear(const std::string& name, int64_t rows,
                               int64_t columns) {
  Shaped(name + "/weight", {rows, columns});
  if (Has(name + "/bias")) Shaped(name + "/bias", {rows});
}

void Ct2VariableReader::LayerNorm(const std::string& name, int64_t size) {
  if (Has(name + "/gamma") && !Has(name + "/beta")) {
    Fail("variable \"" + name +
         "/gamma\" has no beta: RMS norms (rms_norm) are not served");
  }
  Shaped(name + "/gamma", {size});
  Shaped(name + "/beta", {size});
}

int64_t Ct2VariableReader::Flag(const std::string& name, int64_t fallback) {
  if (!Has(name)) return fallback;
  Take(name);
  return *model_.Integer(name);
}

void Ct2VariableReader::Expect(const std::string& name, int64_t value,
                               const std::string& option) {
  if (Flag(name, value) != value) {
    Fail("variable \"" + name + "\" turns on " + option +
         ", which fanyi does not serve");
  }
}

void Ct2VariableReader::FailOnUnread() const {
  for (const std::string& name : model_.VariableNames()) {
    if (read_.count(&model_.Get(name)) != 0) continue;
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
    Fail("variable \"" + name + "\" is not part of a Transformer fanyi serves");
  }
}

std::string Ct2VariableReader::ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace fanyi
