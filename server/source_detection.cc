#include "server/source_detection.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/formats/html_reader.h"
#include "common/pipeline/request_limits.h"
#include "common/text/language_detection.h"
#include "server/served_model.h"

namespace fanyi {

grpc::Status DetectSource(const ModelRegistry& registry,
                          const std::vector<std::string_view>& texts, bool html,
                          v1::ModelChoice* choice,
                          std::vector<v1::DetectedLanguage>* detected) {
  // The sources of the pairs that fit (the named model's, or every pair
  // served, pivots included); the targets of those sources are candidates
  // too, so that a text already in the target is found out rather than
  // read as the likeliest source.
  std::vector<ServedPair> pairs;
  if (choice->model().empty()) {
    pairs = registry.Pairs();
  } else if (std::shared_ptr<ServedModel> named =
                 registry.Find(choice->model())) {
    pairs.push_back({named->translator().source_language(),
                     named->translator().target_language()});
  }
  std::vector<std::string> sources;
  std::vector<std::string> candidates;
  const auto add = [](std::vector<std::string>& list, const std::string& code) {
    if (std::find(list.begin(), list.end(), code) == list.end()) {
      list.push_back(code);
    }
  };
  for (const ServedPair& pair : pairs) {
    if (choice->target_language().empty() ||
        pair.target == choice->target_language()) {
      add(sources, pair.source);
    }
  }
  candidates = sources;
  for (const ServedPair& pair : pairs) {
    if (std::find(sources.begin(), sources.end(), pair.source) !=
        sources.end()) {
      add(candidates, pair.target);
    }
  }
  if (sources.empty()) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        "source_language auto: no served model translates into \"" +
            choice->target_language() + "\"");
  }
  const int max_depth = registry.limits().max_document_depth;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string name =
        texts.size() > 1 ? "texts[" + std::to_string(i) + "]" : "text";
    DetectedLanguage found;
    try {
      found = DetectLanguages(
                  html ? ReadHtml(std::string(texts[i]), max_depth).Words()
                       : std::string(texts[i]),
                  candidates)
                  .front();
    } catch (const std::invalid_argument& e) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          name + ": " + e.what());
    }
    if (std::find(sources.begin(), sources.end(), found.language) ==
        sources.end()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          name + " reads as " + found.language +
                              ", which no served model translates from here");
    }
    if (!detected->empty() && detected->front().language() != found.language) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          "source_language auto: texts[0] reads as " +
              detected->front().language() + " and " + name + " as " +
              found.language +
              "; one call is translated by one model, so send each language "
              "in its own call (HTTP /translate groups them itself)");
    }
    v1::DetectedLanguage& language = detected->emplace_back();
    language.set_language(found.language);
    language.set_confidence(found.confidence);
  }
  if (!detected->empty()) {
    choice->set_source_language(detected->front().language());
  }
  return grpc::Status::OK;
}

grpc::Status RankLanguages(const ModelRegistry& registry,
                           const v1::DetectRequest& request,
                           v1::DetectResponse* response) {
  const TextLimits& limits = registry.limits();
  try {
    RequestLimits(limits).CheckTextCount(request.texts_size(), "texts");
    const std::vector<std::string> candidates = registry.DetectionCandidates();
    const bool html = request.format() == v1::FORMAT_HTML;
    for (int i = 0; i < request.texts_size(); ++i) {
      const std::string& text = request.texts(i);
      std::vector<DetectedLanguage> ranked;
      try {
        ranked = DetectLanguages(
            html ? ReadHtml(text, limits.max_document_depth).Words() : text,
            candidates);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("texts[" + std::to_string(i) +
                                    "]: " + e.what());
      }
      v1::LanguageRanking* ranking = response->add_rankings();
      for (const DetectedLanguage& found : ranked) {
        v1::DetectedLanguage* language = ranking->add_languages();
        language->set_language(found.language);
        language->set_confidence(found.confidence);
      }
    }
  } catch (const std::invalid_argument& e) {
    response->Clear();
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what());
  }
  return grpc::Status::OK;
}

}  // namespace fanyi
