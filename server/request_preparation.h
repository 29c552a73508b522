// The gRPC edge of the text pipeline: a fanyi.v1 request read into the
// TextRequest every surface hands TextPipeline, and the pipeline's refusals
// turned into grpc::Status.
#ifndef FANYI_SERVER_REQUEST_PREPARATION_H_
#define FANYI_SERVER_REQUEST_PREPARATION_H_

#include <vector>

#include "common/pipeline/text_pipeline.h"
#include "fanyi/v1/translator.pb.h"
#include "grpcpp/support/status.h"
#include "server/model_registry.h"

namespace fanyi {

// Reads a Translate request into the TextRequest it asks for, whose texts
// are views into it: INVALID_ARGUMENT for a script or format that is not a
// value of its enum.
grpc::Status ReadRequest(const v1::TranslateRequest& request,
                         TextRequest* text_request);
// Likewise for TranslateBatch, whose texts are named "texts[i]".
grpc::Status ReadRequest(const v1::TranslateBatchRequest& request,
                         TextRequest* text_request);

// Prepares the texts of `request` with `pipeline` into `prepared`:
// INVALID_ARGUMENT with the pipeline's message for anything wrong with the
// request, INTERNAL for an unexpected failure.
grpc::Status PrepareRequest(const TextPipeline& pipeline,
                            const TextRequest& request,
                            std::vector<PreparedText>* prepared);
// Likewise for the route's first model (PrepareRoute).
grpc::Status PrepareRequest(const ModelRoute& route, const TextRequest& request,
                            std::vector<PreparedText>* prepared);

// The proto value of `script`.
v1::Script ScriptToProto(ChineseScript script);

}  // namespace fanyi

#endif  // FANYI_SERVER_REQUEST_PREPARATION_H_
