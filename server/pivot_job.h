#ifndef FANYI_SERVER_PIVOT_JOB_H_
#define FANYI_SERVER_PIVOT_JOB_H_

#include <memory>
#include <vector>

#include "common/pipeline/text_translation.h"
#include "grpcpp/support/status.h"
#include "server/assembly_pool.h"
#include "server/model_registry.h"
#include "server/served_model.h"
#include "server/text_job.h"

namespace fanyi {

// A call's texts translated through the pivot language (a ModelRoute of
// two models, model_registry.h), as two TextJobs in turn: the first model
// translates the texts into the pivot, and the second translates those
// translations into the target.
struct PivotJob {
  // The first leg: the texts prepared by the first model's pipeline from
  // PivotFirstLeg(request), the call's deadline and cancellation, and the
  // call's `done`, which gets the texts' translations into the target.
  TextJob first;
  std::shared_ptr<ServedModel> second;
  // What the call asked of its texts (its texts themselves unused): the
  // second leg's options.
  TextRequest request;
};

// What the first leg of `request`, pivoted, asks of its texts: the same
// texts, format and beam, no alternatives and no script (the target's),
// and its glossary's terms kept as written (do_not_translate), so that the
// second leg's glossary finds them in its source.
TextRequest PivotFirstLeg(const TextRequest& request);

// A text's translation through the pivot: `second`'s text, alternatives and
// generated tokens, `first`'s source counts and unknown words, the
// confidence of both (their product), and the counts of what went wrong in
// either leg (capped, unplaced, dropped, broken, repaired) summed.
TextTranslation PivotedTranslation(TextTranslation first,
                                   TextTranslation second);

// Submits the first leg (SubmitTextJob); once it has translated, prepares
// its translations with the second model's pipeline and submits them, and
// answers the call with PivotedTranslation of each text (a text whose first
// translation is blank stays as it came out). A second leg that cannot be
// prepared (INVALID_ARGUMENT, naming the texts) or queued fails the call.
// Returns the first leg's refusal; `done` is then never called.
grpc::Status SubmitPivotJob(AssemblyPool& assembly, PivotJob job);

// Prepares `request`'s texts for the first model of `route`: the texts
// themselves for one model; for a pivot, its first leg (PivotFirstLeg),
// once the second model has checked what the call asks of it (a glossary it
// cannot keep, a script it does not write). Throws as TextPipeline::Prepare.
std::vector<PreparedText> PrepareRoute(const ModelRoute& route,
                                       const TextRequest& request);

// Submits `job`, whose texts PrepareRoute prepared from `request`, to the
// route's models: SubmitTextJob for one, SubmitPivotJob for two. Sets the
// job's model; returns the refusal of the first.
grpc::Status SubmitRoute(AssemblyPool& assembly, const ModelRoute& route,
                         TextJob job, const TextRequest& request);

}  // namespace fanyi

#endif  // FANYI_SERVER_PIVOT_JOB_H_
