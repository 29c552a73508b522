// What the gRPC service's responses say: of a whole Translate or
// TranslateBatch call, of each text's translation, and of each served model.
#ifndef FANYI_SERVER_SERVICE_RESPONSES_H_
#define FANYI_SERVER_SERVICE_RESPONSES_H_

#include "common/pipeline/text_translation.h"
#include "fanyi/v1/translator.pb.h"
#include "server/model_registry.h"
#include "server/served_model.h"

namespace fanyi {

// Fills what a Translate or TranslateBatch response says of the whole call:
// the model (and the pivot's), and the beam size and script every text of
// it got (`beam_size`, and the script `request` asks for).
template <typename Response>
void DescribeCall(const ModelRoute& route, int beam_size,
                  const TextRequest& request, Response* response);

// Writes `assembled` into `translation`.
void FillTranslation(TextTranslation assembled, v1::Translation* translation);

// What ListModels says of `model`.
void DescribeModel(const ServedModel& model, v1::ModelInfo* info);

}  // namespace fanyi

#endif  // FANYI_SERVER_SERVICE_RESPONSES_H_
