#include "server/request_preparation.h"

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include "server/pivot_job.h"

namespace fanyi {
namespace {

std::optional<ChineseScript> ScriptFromProto(int script) {
  switch (script) {
    case v1::SCRIPT_UNSPECIFIED:
      return std::nullopt;
    case v1::SCRIPT_SIMPLIFIED:
      return ChineseScript::kSimplified;
    case v1::SCRIPT_TRADITIONAL_TAIWAN:
      return ChineseScript::kTraditionalTaiwan;
    case v1::SCRIPT_TRADITIONAL_HONG_KONG:
      return ChineseScript::kTraditionalHongKong;
    default:
      throw std::invalid_argument("script " + std::to_string(script) +
                                  " is not a Script value");
  }
}

TextFormat FormatFromProto(int format) {
  switch (format) {
    case v1::FORMAT_UNSPECIFIED:
    case v1::FORMAT_TEXT:
      return TextFormat::kText;
    case v1::FORMAT_HTML:
      return TextFormat::kHtml;
    default:
      throw std::invalid_argument("format " + std::to_string(format) +
                                  " is not a Format value");
  }
}

// The fields a Translate and a TranslateBatch request share.
template <typename Request>
void ReadOptions(const Request& request, TextRequest* text_request) {
  text_request->beam_size = request.beam_size();
  text_request->script = ScriptFromProto(request.script());
  text_request->format = FormatFromProto(request.format());
  for (const v1::GlossaryEntry& entry : request.glossary()) {
    text_request->glossary.push_back({entry.source(), entry.target()});
  }
  text_request->do_not_translate.assign(request.do_not_translate().begin(),
                                        request.do_not_translate().end());
  text_request->template_tokens = !request.translate_template_tokens();
}

// What `request` asks; its texts are views into it.
TextRequest Read(const v1::TranslateRequest& request) {
  TextRequest text_request;
  text_request.texts.push_back(request.text());
  text_request.field = "text";
  text_request.indexed = false;
  ReadOptions(request, &text_request);
  return text_request;
}

TextRequest Read(const v1::TranslateBatchRequest& request) {
  TextRequest text_request;
  text_request.texts.assign(request.texts().begin(), request.texts().end());
  text_request.field = "texts";
  ReadOptions(request, &text_request);
  return text_request;
}

// Runs `prepare`: INVALID_ARGUMENT with the message of a refusal
// (std::invalid_argument), INTERNAL for any other failure.
template <typename Prepare>
grpc::Status Checked(const Prepare& prepare) {
  try {
    prepare();
  } catch (const std::invalid_argument& e) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what());
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::INTERNAL, e.what());
  }
  return grpc::Status::OK;
}

}  // namespace

grpc::Status ReadRequest(const v1::TranslateRequest& request,
                         TextRequest* text_request) {
  return Checked([&] { *text_request = Read(request); });
}

grpc::Status ReadRequest(const v1::TranslateBatchRequest& request,
                         TextRequest* text_request) {
  return Checked([&] { *text_request = Read(request); });
}

grpc::Status PrepareRequest(const TextPipeline& pipeline,
                            const TextRequest& request,
                            std::vector<PreparedText>* prepared) {
  return Checked([&] { *prepared = pipeline.Prepare(request); });
}

grpc::Status PrepareRequest(const ModelRoute& route, const TextRequest& request,
                            std::vector<PreparedText>* prepared) {
  return Checked([&] { *prepared = PrepareRoute(route, request); });
}

v1::Script ScriptToProto(ChineseScript script) {
  switch (script) {
    case ChineseScript::kSimplified:
      return v1::SCRIPT_SIMPLIFIED;
    case ChineseScript::kTraditionalTaiwan:
      return v1::SCRIPT_TRADITIONAL_TAIWAN;
    case ChineseScript::kTraditionalHongKong:
      return v1::SCRIPT_TRADITIONAL_HONG_KONG;
  }
  return v1::SCRIPT_UNSPECIFIED;
}

}  // namespace fanyi
