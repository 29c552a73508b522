#include "server/script_only.h"

#include <cstddef>
#include <stdexcept>
#include <string>

#include "common/pipeline/documents.h"
#include "server/request_preparation.h"

namespace fanyi {

bool IsScriptOnly(const v1::ModelChoice& choice) {
  return choice.model().empty() &&
         choice.source_language() == choice.target_language() &&
         IsChineseLanguage(choice.source_language());
}

template <typename Response>
grpc::Status WriteInScript(const ScriptConverters& converters, int max_depth,
                           const TextRequest& request,
                           const std::vector<v1::Translation*>& outputs,
                           Response* response) {
  const ChineseScript script =
      request.script.value_or(ChineseScript::kSimplified);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    try {
      outputs[i]->set_text(ConvertScript(
          converters.For(script), request.texts[i], request.format, max_depth));
    } catch (const std::invalid_argument& e) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          (outputs.size() > 1 ? "texts[" + std::to_string(i) + "]" : "text") +
              ": " + e.what());
    }
  }
  response->set_script(ScriptToProto(script));
  return grpc::Status::OK;
}

template grpc::Status WriteInScript(
    const ScriptConverters& converters, int max_depth,
    const TextRequest& request, const std::vector<v1::Translation*>& outputs,
    v1::TranslateResponse* response);
template grpc::Status WriteInScript(
    const ScriptConverters& converters, int max_depth,
    const TextRequest& request, const std::vector<v1::Translation*>& outputs,
    v1::TranslateBatchResponse* response);

}  // namespace fanyi
