#include "common/eval/script_purity.h"

namespace fanyi {

ScriptPurity::ScriptPurity()
    : to_simplified_(ScriptConverter::FromOpenCcConfig("t2s.json")),
      to_traditional_(ScriptConverter::FromOpenCcConfig("s2t.json")) {}

bool ScriptPurity::HasTraditionalForms(std::string_view text) const {
  return to_simplified_.Convert(text) != text;
}

bool ScriptPurity::HasSimplifiedForms(std::string_view text) const {
  return to_traditional_.Convert(text) != text;
}

bool ScriptPurity::Mixes(std::string_view text) const {
  return HasTraditionalForms(text) && HasSimplifiedForms(text);
}

}  // namespace fanyi
