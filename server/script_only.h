// Chinese into Chinese at the gRPC edge: a request whose texts are only
// written in another script, with no model (OpenCC).
#ifndef FANYI_SERVER_SCRIPT_ONLY_H_
#define FANYI_SERVER_SCRIPT_ONLY_H_

#include <vector>

#include "common/pipeline/text_translation.h"
#include "common/text/script_converter.h"
#include "fanyi/v1/translator.pb.h"
#include "grpcpp/support/status.h"

namespace fanyi {

// Whether `choice` asks for Chinese into Chinese: the texts are only
// written in the script asked for, with no model (OpenCC).
bool IsScriptOnly(const v1::ModelChoice& choice);

// Chinese into Chinese, with no model: each text of `request` written in
// its script (by `converters`) into its output, and the script in
// `response` (a Translate or TranslateBatch response).
// An HTML text's words are converted, not its markup. Fails with
// INVALID_ARGUMENT, naming the text, for HTML the reader refuses (nested
// deeper than `max_depth`, say).
template <typename Response>
grpc::Status WriteInScript(const ScriptConverters& converters, int max_depth,
                           const TextRequest& request,
                           const std::vector<v1::Translation*>& outputs,
                           Response* response);

}  // namespace fanyi

#endif  // FANYI_SERVER_SCRIPT_ONLY_H_
