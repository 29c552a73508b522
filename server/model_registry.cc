#include "server/model_registry.h"

#include <utility>

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

}  // namespace fanyi
