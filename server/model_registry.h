#ifndef FANYI_SERVER_MODEL_REGISTRY_H_
#define FANYI_SERVER_MODEL_REGISTRY_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/pipeline/text_translation.h"
#include "fanyi/v1/translator.pb.h"
#include "grpcpp/support/status.h"
#include "server/served_model.h"

namespace fanyi {

// The language a pair that no one model serves is translated through, as
// Argos Translate does: by a model into it, then by one out of it.
inline constexpr char kPivotLanguage[] = "en";

// The models that translate a call, in order: one, or two through
// kPivotLanguage.
using ModelRoute = std::vector<std::shared_ptr<ServedModel>>;

// A source and target language served, directly or through the pivot.
struct ServedPair {
  std::string source;
  std::string target;
  bool pivoted = false;  // Through kPivotLanguage.
};

// The models a server serves, by name, each as the version that takes new
// requests. A request chooses among them (Choose); a new version replaces
// the old one (Replace), and whoever replaced it retires the old one once
// the requests that chose it are answered (they hold it by shared_ptr).
// Thread-safe.
class ModelRegistry {
 public:
  // `limits`: what one request may ask, the same for every model served
  // (each is built with them).
  explicit ModelRegistry(const TextLimits& limits = {}) : limits_(limits) {}

  // The request limits of every model served, also while none is.
  const TextLimits& limits() const { return limits_; }

  // The model `choice` names: by name, or by pair (either language alone
  // when that is unambiguous), or the one model when only one is served and
  // nothing is named. INVALID_ARGUMENT, listing the served pairs, when it
  // names no served model or several models are served and it names none;
  // UNAVAILABLE when none is served.
  grpc::Status Choose(const v1::ModelChoice& choice,
                      std::shared_ptr<ServedModel>* model) const;

  // As Choose, and when no served model translates a pair that `choice`
  // names by both its languages (and no model by name), the two models
  // that translate it through kPivotLanguage, each as Choose would choose
  // it; Choose's error when there are not both.
  grpc::Status ChooseRoute(const v1::ModelChoice& choice,
                           ModelRoute* route) const;
  // Every pair served: each model's, then each pivot's that no model
  // serves, sorted by source and target.
  std::vector<ServedPair> Pairs() const;
  // The languages a text may be found in: the served source languages
  // first (a text too short to tell is named by its script, the first of
  // these it fits), then the served targets, then CommonLanguages().
  std::vector<std::string> DetectionCandidates() const;

  // Serves `model` under its name from now on; returns the version it
  // replaces, or null.
  std::shared_ptr<ServedModel> Replace(std::shared_ptr<ServedModel> model);

  // Stops serving model `name`; returns the version it served, or null.
  std::shared_ptr<ServedModel> Remove(const std::string& name);

  // The version of model `name` served now, or null.
  std::shared_ptr<ServedModel> Find(const std::string& name) const;
  // Every model served now, by name.
  std::vector<std::shared_ptr<ServedModel>> Models() const;

 private:
  // "en-zh (en->zh), zh-en (zh->en)"; needs mutex_ held.
  std::string ListLocked() const;

  const TextLimits limits_;
  mutable std::mutex mutex_;
  // Guarded by mutex_.
  std::map<std::string, std::shared_ptr<ServedModel>> models_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_MODEL_REGISTRY_H_
