#ifndef FANYI_SERVER_TRANSLATION_SERVICE_H_
#define FANYI_SERVER_TRANSLATION_SERVICE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/pipeline/translator.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/assembly_pool.h"
#include "server/model_registry.h"
#include "server/served_model.h"
#include "server/server_metrics.h"

namespace fanyi {

// The fanyi.v1.Translator gRPC service on the callback API: handlers choose
// the served model (ModelRegistry), check and prepare the input on the gRPC
// thread (the model's TextPipeline), hand its parts to the model's
// RequestBatcher and return at once. When the last part has decoded, the
// AssemblyPool assembles the texts (the same pipeline) and finishes the RPC,
// so no thread blocks per request and decode workers only decode. The RPC
// holds its model until it is answered, so a version replaced meanwhile
// finishes it. Errors become grpc::Status here, at the edge.
class TranslationService final : public v1::Translator::CallbackService {
 public:
  // `registry`, `metrics` and `assembly` must outlive the service and every
  // model it has handed texts to.
  TranslationService(ModelRegistry& registry, ServerMetrics& metrics,
                     AssemblyPool& assembly);

  // Translates one text.
  grpc::ServerUnaryReactor* Translate(grpc::CallbackServerContext* context,
                                      const v1::TranslateRequest* request,
                                      v1::TranslateResponse* response) override;

  // Translates many texts, each batched with whatever else is queued;
  // validates every text before queueing any, and queues all of them or
  // none. The first text that fails cancels the others, and the RPC fails
  // with its error.
  //
  // Both methods cut each text into sentences (TextPipeline), decode
  // every sentence as its own row and join the results in the text's
  // layout.
  grpc::ServerUnaryReactor* TranslateBatch(
      grpc::CallbackServerContext* context,
      const v1::TranslateBatchRequest* request,
      v1::TranslateBatchResponse* response) override;

  // The served models, with what each translates.
  grpc::ServerUnaryReactor* ListModels(
      grpc::CallbackServerContext* context,
      const v1::ListModelsRequest* request,
      v1::ListModelsResponse* response) override;

 private:
  class RpcCompletion;  // Answers one RPC exactly once, metrics first.
  struct CallState;     // One RPC's texts while their parts decode.

  // The model `choice` names, with the RPC's metrics labelled by it; null,
  // with the RPC finished, when no served model fits.
  std::shared_ptr<ServedModel> Choose(const v1::ModelChoice& choice,
                                      RpcCompletion& completion) const;
  // Queues every part of `texts` (all or none); their
  // translations go to `outputs`, one per text, and the last part to finish
  // has the call assembled and finished.
  void Submit(grpc::CallbackServerContext* context,
              const RpcCompletion& completion,
              std::shared_ptr<ServedModel> model,
              std::vector<PreparedText> texts,
              std::vector<v1::Translation*> outputs, bool batch_call);
  // Records one part's result; the last part of the call posts its
  // assembly (FinishCall) to the assembly pool.
  void PartDone(const std::shared_ptr<CallState>& state, std::size_t text,
                std::size_t part, const grpc::Status& decode_status,
                std::vector<int64_t> target_ids) const;
  // On the assembly pool: assembles every text of the call and finishes it.
  static void FinishCall(CallState& state);
  // Fills `translation` from the decoded parts of `text`; INTERNAL if that
  // fails.
  static grpc::Status FillTranslation(
      ServedModel& model, const PreparedText& text,
      const std::vector<std::vector<int64_t>>& part_targets,
      v1::Translation* translation);

  ModelRegistry& registry_;
  ServerMetrics& metrics_;
  AssemblyPool& assembly_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_TRANSLATION_SERVICE_H_
