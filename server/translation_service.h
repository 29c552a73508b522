#ifndef FANYI_SERVER_TRANSLATION_SERVICE_H_
#define FANYI_SERVER_TRANSLATION_SERVICE_H_

#include <string>
#include <vector>

#include "common/pipeline/text_translation.h"
#include "common/text/script_converter.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/assembly_pool.h"
#include "server/model_registry.h"
#include "server/rpc_completion.h"
#include "server/served_model.h"
#include "server/server_metrics.h"
#include "server/translation_cache.h"

namespace fanyi {

// The fanyi.v1.Translator gRPC service on the callback API: handlers choose
// the served model (ModelRegistry), check and prepare the input on the gRPC
// thread (the model's TextPipeline), hand the texts to the model as a
// TextJob and return at once. When the job's last part has decoded, the
// AssemblyPool assembles the texts (the same pipeline) and finishes the RPC,
// so no thread blocks per request and decode workers only decode. The RPC
// holds its model until it is answered, so a version replaced meanwhile
// finishes it. Errors become grpc::Status here, at the edge.
// The gRPC service. Translate and TranslateBatch are raw methods: the
// service reads their request bytes itself (raw_messages.h), so that a
// text field with invalid UTF-8 gets INVALID_ARGUMENT naming it rather than
// the parser's INTERNAL.
class TranslationService final
    : public v1::Translator::WithRawCallbackMethod_Translate<
          v1::Translator::WithRawCallbackMethod_TranslateBatch<
              v1::Translator::CallbackService>> {
 public:
  // `registry`, `metrics` and `assembly` must outlive the service and every
  // model it has handed texts to; so must `cache` (null: none), which
  // answers texts asked the same way before.
  TranslationService(ModelRegistry& registry, ServerMetrics& metrics,
                     AssemblyPool& assembly, TranslationCache* cache = nullptr);

  // Translates one text (a TranslateRequest, answered with a
  // TranslateResponse).
  grpc::ServerUnaryReactor* Translate(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;

  // Translates many texts, each batched with whatever else is queued;
  // validates every text before queueing any, and queues all of them or
  // none. The first text that fails cancels the others, and the RPC fails
  // with its error.
  //
  // Both methods cut each text into sentences (TextPipeline), decode
  // every sentence as its own row and join the results in the text's
  // layout.
  // (A TranslateBatchRequest, answered with a TranslateBatchResponse.)
  grpc::ServerUnaryReactor* TranslateBatch(grpc::CallbackServerContext* context,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response) override;

  // Each text's languages, most likely first (ModelRegistry::
  // DetectionCandidates): INVALID_ARGUMENT for more texts than the limit,
  // a text that is not UTF-8 or HTML deeper than the limit.
  grpc::ServerUnaryReactor* Detect(grpc::CallbackServerContext* context,
                                   const v1::DetectRequest* request,
                                   v1::DetectResponse* response) override;

  // The served models, with what each translates.
  grpc::ServerUnaryReactor* ListModels(
      grpc::CallbackServerContext* context,
      const v1::ListModelsRequest* request,
      v1::ListModelsResponse* response) override;

 private:
  template <typename Request, typename Response>
  struct RawCall;

  // Reads a raw method's request and hands it to `handle`; the response
  // message is written out when the RPC answers OK.
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* Raw(
      const char* method, grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* request, grpc::ByteBuffer* response,
      void (TranslationService::*handle)(grpc::CallbackServerContext*,
                                         RpcCompletion, const Request&,
                                         Response*));
  void TranslateText(grpc::CallbackServerContext* context,
                     RpcCompletion completion,
                     const v1::TranslateRequest& request,
                     v1::TranslateResponse* response);
  void TranslateTexts(grpc::CallbackServerContext* context,
                      RpcCompletion completion,
                      const v1::TranslateBatchRequest& request,
                      v1::TranslateBatchResponse* response);

  // The models that translate what `choice` names (ModelRegistry::
  // ChooseRoute), with the RPC's metrics labelled by the last; empty, with
  // the RPC finished, when no served model fits.
  ModelRoute Choose(const v1::ModelChoice& choice,
                    RpcCompletion& completion) const;
  // The cached texts of `text_request` (TakeFromCache) into their
  // `outputs`, the others prepared for the route's first model and
  // submitted (Submit); what the call got described in `response`
  // (a Translate or TranslateBatch response).
  template <typename Response>
  void PrepareAndSubmit(grpc::CallbackServerContext* context,
                        const RpcCompletion& completion,
                        const ModelRoute& route, TextRequest text_request,
                        std::vector<v1::Translation*> outputs,
                        Response* response, bool batch_call);
  // Hands `texts` (prepared for the route's first model) to the route as a
  // TextJob, or a PivotJob asking `request` of its second leg; their
  // translations go to `outputs`, one per text, and the job's completion
  // (on the assembly pool) finishes the RPC.
  // Keeps each text's translation in the cache under its key of
  // `cache_keys` (none when empty).
  void Submit(grpc::CallbackServerContext* context,
              const RpcCompletion& completion, const ModelRoute& route,
              std::vector<PreparedText> texts, const TextRequest& request,
              std::vector<v1::Translation*> outputs,
              std::vector<std::string> cache_keys, bool batch_call);

  ModelRegistry& registry_;
  ServerMetrics& metrics_;
  AssemblyPool& assembly_;
  TranslationCache* const cache_;
  // For Chinese into Chinese: another script, no model.
  const ScriptConverters converters_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_TRANSLATION_SERVICE_H_
