#include "server/model_registry.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/text/language_detection.h"

namespace fanyi {
namespace {

grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

// Whether `model` translates what `choice` asks for (unset fields match
// anything).
bool Matches(const ServedModel& model, const v1::ModelChoice& choice) {
  const Translator& translator = model.translator();
  return (choice.model().empty() || choice.model() == model.name()) &&
         (choice.source_language().empty() ||
          choice.source_language() == translator.source_language()) &&
         (choice.target_language().empty() ||
          choice.target_language() == translator.target_language());
}

// "model \"x\", source_language \"en\"": what `choice` names.
std::string Describe(const v1::ModelChoice& choice) {
  std::string text;
  auto add = [&text](const char* field, const std::string& value) {
    if (value.empty()) return;
    if (!text.empty()) text += ", ";
    text += std::string(field) + " \"" + value + "\"";
  };
  add("model", choice.model());
  add("source_language", choice.source_language());
  add("target_language", choice.target_language());
  return text;
}

}  // namespace

grpc::Status ModelRegistry::Choose(const v1::ModelChoice& choice,
                                   std::shared_ptr<ServedModel>* model) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (models_.empty()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "no model is loaded");
  }
  const bool names_one = !choice.model().empty() ||
                         !choice.source_language().empty() ||
                         !choice.target_language().empty();
  if (!names_one) {
    if (models_.size() == 1) {
      *model = models_.begin()->second;
      return grpc::Status::OK;
    }
    return Invalid(
        "this server serves several models: name one in model "
        "(source_language and target_language, or model); served: " +
        ListLocked());
  }
  std::vector<std::shared_ptr<ServedModel>> matching;
  for (const auto& [name, served] : models_) {
    if (Matches(*served, choice)) matching.push_back(served);
  }
  if (matching.size() == 1) {
    *model = matching.front();
    return grpc::Status::OK;
  }
  return Invalid((matching.empty() ? "no served model translates "
                                   : "several served models match ") +
                 Describe(choice) + "; served: " + ListLocked());
}

grpc::Status ModelRegistry::ChooseRoute(const v1::ModelChoice& choice,
                                        ModelRoute* route) const {
  std::shared_ptr<ServedModel> model;
  const grpc::Status direct = Choose(choice, &model);
  if (direct.ok()) {
    *route = {std::move(model)};
    return direct;
  }
  const std::string& source = choice.source_language();
  const std::string& target = choice.target_language();
  if (direct.error_code() != grpc::StatusCode::INVALID_ARGUMENT ||
      !choice.model().empty() || source.empty() || target.empty() ||
      source == target || source == kPivotLanguage ||
      target == kPivotLanguage) {
    return direct;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ModelRoute into_pivot, out_of_pivot;
  for (const auto& [name, served] : models_) {
    const Translator& translator = served->translator();
    const std::string& from = translator.source_language();
    const std::string& to = translator.target_language();
    // Several models of the pair itself: the client picks one by name.
    if (from == source && to == target) return direct;
    if (from == source && to == kPivotLanguage) into_pivot.push_back(served);
    if (from == kPivotLanguage && to == target) out_of_pivot.push_back(served);
  }
  if (into_pivot.empty() || out_of_pivot.empty()) return direct;
  if (into_pivot.size() > 1 || out_of_pivot.size() > 1) {
    return Invalid("no served model translates " + Describe(choice) +
                   ", and several would through " + kPivotLanguage +
                   ": translate into " + kPivotLanguage +
                   " and out of it in two calls, each naming its model; "
                   "served: " +
                   ListLocked());
  }
  *route = {into_pivot.front(), out_of_pivot.front()};
  return grpc::Status::OK;
}

std::vector<ServedPair> ModelRegistry::Pairs() const {
  std::set<std::pair<std::string, std::string>> direct;
  std::set<std::string> into_pivot, out_of_pivot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [name, served] : models_) {
      const Translator& translator = served->translator();
      direct.emplace(translator.source_language(),
                     translator.target_language());
      if (translator.target_language() == kPivotLanguage) {
        into_pivot.insert(translator.source_language());
      }
      if (translator.source_language() == kPivotLanguage) {
        out_of_pivot.insert(translator.target_language());
      }
    }
  }
  std::vector<ServedPair> pairs;
  for (const auto& [source, target] : direct) {
    pairs.push_back({source, target, false});
  }
  for (const std::string& source : into_pivot) {
    for (const std::string& target : out_of_pivot) {
      if (source != target && !direct.count({source, target})) {
        pairs.push_back({source, target, true});
      }
    }
  }
  std::sort(
      pairs.begin(), pairs.end(), [](const ServedPair& a, const ServedPair& b) {
        return std::tie(a.source, a.target) < std::tie(b.source, b.target);
      });
  return pairs;
}

std::shared_ptr<ServedModel> ModelRegistry::Replace(
    std::shared_ptr<ServedModel> model) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<ServedModel>& slot = models_[model->name()];
  std::swap(slot, model);
  return model;
}

std::shared_ptr<ServedModel> ModelRegistry::Remove(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = models_.find(name);
  if (found == models_.end()) return nullptr;
  std::shared_ptr<ServedModel> removed = std::move(found->second);
  models_.erase(found);
  return removed;
}

std::shared_ptr<ServedModel> ModelRegistry::Find(
    const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = models_.find(name);
  return found == models_.end() ? nullptr : found->second;
}

std::vector<std::shared_ptr<ServedModel>> ModelRegistry::Models() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<ServedModel>> models;
  for (const auto& [name, served] : models_) models.push_back(served);
  return models;
}

std::string ModelRegistry::ListLocked() const {
  std::string list;
  for (const auto& [name, served] : models_) {
    if (!list.empty()) list += ", ";
    list += name + " (" + served->translator().source_language() + "->" +
            served->translator().target_language() + ")";
  }
  return list;
}

std::vector<std::string> ModelRegistry::DetectionCandidates() const {
  std::vector<std::string> candidates;
  const auto add = [&candidates](const std::string& language) {
    if (std::find(candidates.begin(), candidates.end(), language) ==
        candidates.end()) {
      candidates.push_back(language);
    }
  };
  const std::vector<std::shared_ptr<ServedModel>> served = Models();
  for (const auto& model : served) add(model->translator().source_language());
  for (const auto& model : served) add(model->translator().target_language());
  for (const std::string& language : CommonLanguages()) add(language);
  return candidates;
}

}  // namespace fanyi
