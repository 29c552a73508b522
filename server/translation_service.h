#ifndef FANYI_SERVER_TRANSLATION_SERVICE_H_
#define FANYI_SERVER_TRANSLATION_SERVICE_H_

#include <string>

#include "common/decoding/translator.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/request_batcher.h"
#include "server/request_validator.h"
#include "server/server_metrics.h"

namespace fanyi {

// The fanyi.v1.Translator gRPC service on the callback API: handlers validate
// and encode the input on the gRPC thread (RequestValidator), hand it to the
// RequestBatcher and return at once; the batcher's completion callback finishes
// the RPC, so no thread blocks per request. Errors become grpc::Status here, at
// the edge.
class TranslationService final : public v1::Translator::CallbackService {
 public:
  // `translator`, `batcher` and `metrics` must outlive the service.
  // `translator` is only used through its const methods here (encoding,
  // detokenizing); decoding happens through `batcher`.
  TranslationService(const ServiceOptions& options,
                     const Translator& translator, RequestBatcher& batcher,
                     ServerMetrics& metrics);

  // Translates one text.
  grpc::ServerUnaryReactor* Translate(grpc::CallbackServerContext* context,
                                      const v1::TranslateRequest* request,
                                      v1::TranslateResponse* response) override;

  // Translates many texts, each batched with whatever else is queued;
  // validates every text before queueing any, and queues all of them or
  // none. The first text that fails cancels the others, and the RPC fails
  // with its error.
  grpc::ServerUnaryReactor* TranslateBatch(
      grpc::CallbackServerContext* context,
      const v1::TranslateBatchRequest* request,
      v1::TranslateBatchResponse* response) override;

 private:
  // Fills `translation` from decoded target ids; INTERNAL if that fails.
  grpc::Status FillTranslation(const std::vector<int64_t>& target_ids,
                               int source_token_count,
                               v1::Translation* translation) const;

  const RequestValidator validator_;
  const Translator& translator_;
  RequestBatcher& batcher_;
  ServerMetrics& metrics_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_TRANSLATION_SERVICE_H_
