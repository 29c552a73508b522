// Whether Chinese text keeps to one script.
#ifndef FANYI_COMMON_EVAL_SCRIPT_PURITY_H_
#define FANYI_COMMON_EVAL_SCRIPT_PURITY_H_

#include <string_view>

#include "common/text/script_converter.h"

namespace fanyi {

// Tells which Chinese scripts a text uses, by OpenCC's dictionaries: it has
// Traditional forms when converting it to Simplified (t2s) changes it, and
// Simplified forms when converting it to Traditional (s2t) does. Characters
// OpenCC maps one-to-many (台, 后, 里) count as Simplified forms, so a
// Traditional text holding them is also counted as mixed: an upper bound.
class ScriptPurity {
 public:
  // Loads OpenCC's t2s and s2t; throws std::runtime_error when they fail to.
  ScriptPurity();

  bool HasTraditionalForms(std::string_view text) const;
  bool HasSimplifiedForms(std::string_view text) const;
  // Both at once.
  bool Mixes(std::string_view text) const;

 private:
  ScriptConverter to_simplified_;
  ScriptConverter to_traditional_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_EVAL_SCRIPT_PURITY_H_
