#ifndef FANYI_SERVER_HTTP_LIBRETRANSLATE_FIELDS_H_
#define FANYI_SERVER_HTTP_LIBRETRANSLATE_FIELDS_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/text/placeholder_masker.h"
#include "grpcpp/support/status.h"
#include "server/http/http_server.h"
#include "server/http/request_fields.h"
#include "server/model_registry.h"

namespace fanyi {

// How LibreTranslate's routes read their fields and answer: the shared
// pieces of LibreTranslateApi and FileTranslation.

// A refusal with LibreTranslate's status code and message: what a route
// throws, and the API answers as {"error": message}.
struct HttpError : std::runtime_error {
  HttpError(int code, const std::string& message)
      : std::runtime_error(message), status(code) {}
  int status;
};

// A JSON answer, UTF-8 as it is (no \u escapes).
HttpResponse JsonResponse(int status, const nlohmann::json& body);
// {"error": message}.
HttpResponse ErrorResponse(int status, const std::string& message);
// The HTTP status of a failed translation's gRPC code.
int HttpStatusOf(grpc::StatusCode code);
// A failed translation's answer (429 as LibreTranslate's "Slowdown: ...").
HttpResponse StatusResponse(const grpc::Status& status);

// Field `name`, which must be a string, or absent (empty).
std::string StringField(const RequestFields& fields, const std::string& name);
// A whole-number field sent as a number or as digits, from `min` to `max`
// (400 naming them otherwise, however large the number); `fallback` when
// absent.
int IntegerField(const RequestFields& fields, const std::string& name,
                 int fallback, int min, int max);
// A true/false field: JSON true or false, or (from a form or a query) the
// strings "true", "false", "1" or "0"; `fallback` when absent, 400
// otherwise.
bool BooleanField(const RequestFields& fields, const std::string& name,
                  bool fallback);
// The range IntegerField takes for beam_size and alternatives: more than
// the server's limits, which cap them.
constexpr int kMaxRequestedBeam = 1000;
// Field `name`'s strings: one string, or an array of strings
// (`*is_array`); none when absent.
std::vector<std::string> StringList(const RequestFields& fields,
                                    const std::string& name,
                                    bool* is_array = nullptr);
// The texts of `q` (`*is_array` when sent as an array).
std::vector<std::string> ReadTexts(const RequestFields& fields, bool* is_array);
// fanyi's glossary field: an object of term -> translation.
std::vector<GlossaryEntry> ReadGlossary(const RequestFields& fields);
// A language code field that must be there.
std::string RequiredCode(const RequestFields& fields, const std::string& name);

// The served models for `source` -> `target` (model languages): the one
// named `model_name` when not empty, else the pair's, else two through the
// pivot language (ModelRegistry::ChooseRoute); an HttpError naming the
// unsupported code as the client wrote it (`source_code`, `target_code`)
// otherwise.
ModelRoute ChooseRoute(const ModelRegistry& models, const std::string& source,
                       const std::string& target,
                       const std::string& source_code,
                       const std::string& target_code,
                       const std::string& model_name);

// The source languages `models` translate into `target`, by one model or
// through the pivot language.
std::vector<std::string> SourcesInto(const ModelRegistry& models,
                                     const std::string& target);

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_LIBRETRANSLATE_FIELDS_H_
