#include "server/http/suggest_route.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "common/pipeline/request_limits.h"
#include "common/text/utf8.h"
#include "server/http/language_codes.h"
#include "server/http/libretranslate_fields.h"

namespace fanyi {

SuggestRoute::SuggestRoute(const ModelRegistry& models, const std::string& path,
                           int64_t max_suggestions, int64_t max_bytes)
    : models_(models), suggestions_(path, max_suggestions, max_bytes) {}

HttpResponse SuggestRoute::Suggest(const RequestFields& fields,
                                   const std::string& api_key) const {
  Suggestion suggestion;
  suggestion.text = StringField(fields, "q");
  suggestion.suggestion = StringField(fields, "s");
  for (const auto& [name, value] : {std::pair{"q", &suggestion.text},
                                    std::pair{"s", &suggestion.suggestion}}) {
    if (value->empty()) {
      throw HttpError(
          400, std::string("Invalid request: missing ") + name + " parameter");
    }
    if (IsBlank(*value)) {
      throw HttpError(400,
                      std::string("Invalid request: ") + name + " is blank");
    }
    if (value->size() > kMaxSuggestionBytes) {
      throw HttpError(400, std::string("Invalid request: ") + name + " has " +
                               std::to_string(value->size()) +
                               " bytes; a suggestion's texts may have " +
                               std::to_string(kMaxSuggestionBytes));
    }
    try {
      DecodeUtf8(*value);
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, std::string("Invalid request: ") + name +
                               " is not UTF-8: " + e.what());
    }
  }
  const std::string source_code = RequiredCode(fields, "source");
  const std::string target_code = RequiredCode(fields, "target");
  const std::optional<LanguageCode> source = ReadLanguageCode(source_code);
  if (!source) throw HttpError(400, source_code + " is not supported");
  const std::optional<LanguageCode> target = ReadLanguageCode(target_code);
  if (!target) throw HttpError(400, target_code + " is not supported");
  // The model that translates the pair: the one the suggestion corrects
  // (through the pivot: both, named "first+second", with the second's
  // version).
  const ModelRoute route =
      ChooseRoute(models_, source->language, target->language, source_code,
                  target_code, StringField(fields, "model"));
  const std::shared_ptr<ServedModel>& model = route.back();
  const RequestLimits limits(
      model->translator().pipeline().limits().text_limits());
  limits.CheckText(suggestion.text, "q");  // 400 beyond the text limit.
  limits.CheckText(suggestion.suggestion, "s");
  suggestion.source_language = source->language;
  suggestion.target_language = target->language;
  suggestion.model = route.size() == 1
                         ? model->name()
                         : route.front()->name() + "+" + model->name();
  suggestion.model_version = model->version();
  suggestion.api_key = api_key;
  suggestion.created = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  SuggestionStore::Outcome outcome = SuggestionStore::Outcome::kAdded;
  try {
    outcome = suggestions_.Add(suggestion);
  } catch (const std::runtime_error& e) {
    // The file's path and SQLite's words are the operator's, not a
    // client's.
    std::cerr << "fanyi-server: /suggest: " << e.what() << std::endl;
    throw HttpError(500, "the suggestion could not be stored");
  }
  switch (outcome) {
    case SuggestionStore::Outcome::kAdded:
      return JsonResponse(200, {{"success", true}});
    case SuggestionStore::Outcome::kTooLarge:  // Checked above.
      throw HttpError(400, "Invalid request: the suggestion is too large");
    case SuggestionStore::Outcome::kFull:
      throw HttpError(507, "the server's suggestions file is full");
    case SuggestionStore::Outcome::kBusy:
      throw HttpError(503,
                      "the server's suggestions file is busy; retry later");
  }
  throw HttpError(500, "the suggestion could not be stored");
}

}  // namespace fanyi
