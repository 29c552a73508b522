#ifndef FANYI_SERVER_TEXT_JOB_H_
#define FANYI_SERVER_TEXT_JOB_H_

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "common/pipeline/text_translation.h"
#include "grpcpp/support/status.h"
#include "server/assembly_pool.h"
#include "server/served_model.h"

namespace fanyi {

// What a surface (gRPC or HTTP) asks of one call's prepared texts.
struct TextJob {
  std::shared_ptr<ServedModel> model;  // Held until `done` has run.
  std::vector<PreparedText> texts;     // From model's TextPipeline::Prepare.
  std::chrono::system_clock::time_point deadline;
  // True once the caller has given up (a cancelled RPC, a closed
  // connection); polled between decoding steps. May be empty.
  std::function<bool()> cancelled;
  // Errors name their text "texts[i]: ..." (a batch call).
  bool name_texts = false;
  // Called once, on the assembly pool, with every text's translation in
  // order, or with the first failure (and no translations).
  std::function<void(const grpc::Status& status,
                     std::vector<TextTranslation> translations)>
      done;
};

// Decodes a call's texts and assembles them: every part of every text goes
// to the model's RequestBatcher, and when the last part has decoded the
// AssemblyPool assembles the texts (the model's TextPipeline), records
// them in the model's metrics and calls `job.done`, so that decode workers
// only decode. The first part that fails cancels the others. Returns the
// queue's refusal (RESOURCE_EXHAUSTED, UNAVAILABLE) when it takes none of
// the parts; `done` is then never called.
grpc::Status SubmitTextJob(AssemblyPool& assembly, TextJob job);

}  // namespace fanyi

#endif  // FANYI_SERVER_TEXT_JOB_H_
