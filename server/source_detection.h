// Language detection at the gRPC edge: the source language of a request
// that asks for "auto", and the Detect RPC's rankings.
#ifndef FANYI_SERVER_SOURCE_DETECTION_H_
#define FANYI_SERVER_SOURCE_DETECTION_H_

#include <string_view>
#include <vector>

#include "fanyi/v1/translator.pb.h"
#include "grpcpp/support/status.h"
#include "server/model_registry.h"

namespace fanyi {

// For a choice whose source_language is "auto": detects each of `texts`
// (HTML read for its words when `html`) among the source languages of
// the models of `registry` that fit the rest of `choice`, names the
// detected language in `choice`, and gives each text's detection in
// `detected`. INVALID_ARGUMENT when no served model fits, a text is not
// UTF-8, or the texts read as different languages.
grpc::Status DetectSource(const ModelRegistry& registry,
                          const std::vector<std::string_view>& texts, bool html,
                          v1::ModelChoice* choice,
                          std::vector<v1::DetectedLanguage>* detected);

// The Detect RPC's answer: each text's languages, most likely first
// (ModelRegistry::DetectionCandidates), into `response`. INVALID_ARGUMENT,
// with `response` cleared, for more texts than the limit, a text that is
// not UTF-8 or HTML deeper than the limit.
grpc::Status RankLanguages(const ModelRegistry& registry,
                           const v1::DetectRequest& request,
                           v1::DetectResponse* response);

}  // namespace fanyi

#endif  // FANYI_SERVER_SOURCE_DETECTION_H_
