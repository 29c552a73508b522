// The gRPC edge of the text pipeline: a fanyi.v1 request read into the
// TextRequest every surface hands TextPipeline, and the pipeline's refusals
// turned into grpc::Status.
#ifndef FANYI_SERVER_REQUEST_PREPARATION_H_
#define FANYI_SERVER_REQUEST_PREPARATION_H_

#include <vector>

#include "common/pipeline/text_pipeline.h"
#include "fanyi/v1/translator.pb.h"
#include "grpcpp/support/status.h"

namespace fanyi {

// Reads a Translate request into the TextRequest it asks for and prepares
// its texts with `pipeline` into `prepared`: INVALID_ARGUMENT with the
// pipeline's message for anything wrong with the request, INTERNAL for an
// unexpected failure.
grpc::Status PrepareRequest(const TextPipeline& pipeline,
                            const v1::TranslateRequest& request,
                            std::vector<PreparedText>* prepared);
// Likewise for TranslateBatch; errors name its texts "texts[i]".
grpc::Status PrepareRequest(const TextPipeline& pipeline,
                            const v1::TranslateBatchRequest& request,
                            std::vector<PreparedText>* prepared);

// The proto value of `script`.
v1::Script ScriptToProto(ChineseScript script);

}  // namespace fanyi

#endif  // FANYI_SERVER_REQUEST_PREPARATION_H_
