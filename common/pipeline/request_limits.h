#ifndef FANYI_COMMON_PIPELINE_REQUEST_LIMITS_H_
#define FANYI_COMMON_PIPELINE_REQUEST_LIMITS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "common/pipeline/text_translation.h"

namespace fanyi {

// What one request may ask (TextLimits), checked before any of its texts is
// prepared: how many texts, the beam size, the glossary terms, each text's
// size, and the sentences and clauses of all its texts. Knows nothing of
// the model. Each check throws std::invalid_argument naming the field and
// what is wrong with it. Thread-safe: every method is const.
class RequestLimits {
 public:
  explicit RequestLimits(const TextLimits& limits);

  // The limits it checks.
  const TextLimits& text_limits() const { return limits_; }

  // `count` texts, named `field` ("texts"): at least one, at most
  // max_texts.
  void CheckTextCount(std::size_t count, const std::string& field) const;
  // The options `request` asks for, within the limits: the beam size
  // resolved (0: the default; capped), and the glossary and
  // do-not-translate terms checked (UTF-8, not blank, at most 256 bytes)
  // and merged into one glossary.
  TextOptions ReadOptions(const TextRequest& request) const;
  // One text, named `field`: not empty, at most max_input_chars characters.
  void CheckText(std::string_view text, const std::string& field) const;
  // The sentences and clauses of a whole request: at most
  // max_request_parts.
  void CheckPartCount(std::size_t parts) const;

 private:
  const TextLimits limits_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_REQUEST_LIMITS_H_
