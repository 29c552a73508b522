#include "server/http/libretranslate_fields.h"

#include <algorithm>
#include <climits>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>

namespace fanyi {
namespace {

std::string ToJson(const nlohmann::json& value) {
  // UTF-8 as it is, no \u escapes; invalid bytes (which the pipeline
  // refuses before they could reach an answer) would become U+FFFD.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

HttpResponse JsonResponse(int status, const nlohmann::json& body) {
  HttpResponse response;
  response.status = status;
  response.body = ToJson(body);
  return response;
}

HttpResponse ErrorResponse(int status, const std::string& message) {
  return JsonResponse(status, {{"error", message}});
}

int HttpStatusOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      return 400;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    default:
      return 500;
  }
}

HttpResponse StatusResponse(const grpc::Status& status) {
  const int http_status = HttpStatusOf(status.error_code());
  return ErrorResponse(http_status, http_status == 429
                                        ? "Slowdown: " + status.error_message()
                                        : status.error_message());
}

std::string StringField(const RequestFields& fields, const std::string& name) {
  const nlohmann::json& value = fields.Get(name);
  if (value.is_null()) return "";
  if (!value.is_string()) {
    throw HttpError(400, "Invalid request: " + name + " must be a string");
  }
  return value.get<std::string>();
}

bool BooleanField(const RequestFields& fields, const std::string& name,
                  bool fallback) {
  const nlohmann::json& value = fields.Get(name);
  if (value.is_null()) return fallback;
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text == "true" || text == "1") return true;
    if (text == "false" || text == "0") return false;
  }
  throw HttpError(400, "Invalid request: " + name + " must be true or false");
}

int IntegerField(const RequestFields& fields, const std::string& name,
                 int fallback, int min, int max) {
  const nlohmann::json& value = fields.Get(name);
  if (value.is_null()) return fallback;
  // Read wide, so that no value wraps into the range (2^32 + 2 is not 2).
  std::optional<long long> number;
  if (value.is_number_unsigned()) {
    number = value.get<unsigned long long>() >
                     static_cast<unsigned long long>(LLONG_MAX)
                 ? LLONG_MAX
                 : static_cast<long long>(value.get<unsigned long long>());
  } else if (value.is_number_integer()) {
    number = value.get<long long>();
  } else if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    try {
      std::size_t used = 0;
      number = std::stoll(text, &used);
      if (used != text.size()) number.reset();
    } catch (const std::out_of_range&) {
      number = text.find('-') == std::string::npos ? LLONG_MAX : LLONG_MIN;
    } catch (const std::invalid_argument&) {
    }
  }
  if (!number) {
    throw HttpError(400,
                    "Invalid request: " + name + " must be a whole number");
  }
  if (*number < min || *number > max) {
    throw HttpError(400, "Invalid request: " + name + " must be from " +
                             std::to_string(min) + " to " +
                             std::to_string(max));
  }
  return static_cast<int>(*number);
}

std::vector<std::string> StringList(const RequestFields& fields,
                                    const std::string& name, bool* is_array) {
  const nlohmann::json& value = fields.Get(name);
  if (is_array != nullptr) *is_array = value.is_array();
  std::vector<std::string> strings;
  if (value.is_null()) return strings;
  const auto add = [&](const nlohmann::json& item) {
    if (!item.is_string()) {
      throw HttpError(400, "Invalid request: " + name +
                               " must be a string or an array of strings");
    }
    strings.push_back(item.get<std::string>());
  };
  if (!value.is_array()) {
    add(value);
    return strings;
  }
  for (const nlohmann::json& item : value) add(item);
  return strings;
}

std::vector<std::string> ReadTexts(const RequestFields& fields,
                                   bool* is_array) {
  if (fields.Get("q").is_null()) {
    throw HttpError(400, "Invalid request: missing q parameter");
  }
  return StringList(fields, "q", is_array);
}

std::vector<GlossaryEntry> ReadGlossary(const RequestFields& fields) {
  const nlohmann::json* glossary = &fields.Get("glossary");
  nlohmann::json parsed;
  if (glossary->is_string()) {  // A form's value: JSON in a string.
    const std::string& text = glossary->get_ref<const std::string&>();
    try {
      CheckJsonDepth(text, 1, "glossary");
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, std::string("Invalid request: ") + e.what());
    }
    parsed = nlohmann::json::parse(text, nullptr, false);
    glossary = &parsed;
  }
  std::vector<GlossaryEntry> entries;
  if (glossary->is_null()) return entries;
  if (!glossary->is_object()) {
    throw HttpError(400,
                    "Invalid request: glossary must be an object of term: "
                    "translation");
  }
  for (const auto& [term, translation] : glossary->items()) {
    if (!translation.is_string()) {
      throw HttpError(
          400, "Invalid request: glossary[" + term + "] must be a string");
    }
    entries.push_back({term, translation.get<std::string>()});
  }
  return entries;
}

std::string RequiredCode(const RequestFields& fields, const std::string& name) {
  const std::string code = StringField(fields, name);
  if (code.empty()) {
    throw HttpError(400, "Invalid request: missing " + name + " parameter");
  }
  return code;
}

std::vector<std::string> SourcesInto(const ModelRegistry& models,
                                     const std::string& target) {
  std::vector<std::string> sources;
  for (const ServedPair& pair : models.Pairs()) {
    if (pair.target == target && std::find(sources.begin(), sources.end(),
                                           pair.source) == sources.end()) {
      sources.push_back(pair.source);
    }
  }
  return sources;
}

ModelRoute ChooseRoute(const ModelRegistry& models, const std::string& source,
                       const std::string& target,
                       const std::string& source_code,
                       const std::string& target_code,
                       const std::string& model_name) {
  v1::ModelChoice choice;
  choice.set_source_language(source);
  choice.set_target_language(target);
  choice.set_model(model_name);
  ModelRoute route;
  if (grpc::Status status = models.ChooseRoute(choice, &route); !status.ok()) {
    if (status.error_code() != grpc::StatusCode::INVALID_ARGUMENT ||
        !model_name.empty()) {
      throw HttpError(HttpStatusOf(status.error_code()),
                      status.error_message());
    }
    bool source_served = false;
    int pair_served = 0, into_pivot = 0, out_of_pivot = 0;
    for (const std::shared_ptr<ServedModel>& served : models.Models()) {
      const std::string& from = served->translator().source_language();
      const std::string& to = served->translator().target_language();
      source_served |= from == source;
      pair_served += from == source && to == target;
      into_pivot += from == source && to == kPivotLanguage;
      out_of_pivot += from == kPivotLanguage && to == target;
    }
    // Several models of the pair (two packages of it, say), or of a leg
    // through the pivot: the registry's message names them, and the client
    // can pick one by name.
    if (pair_served > 1 || (into_pivot > 0 && out_of_pivot > 0)) {
      throw HttpError(400, status.error_message());
    }
    throw HttpError(
        400, (source_served ? target_code : source_code) + " is not supported");
  }
  return route;
}

}  // namespace fanyi
