#include "server/http/detect_route.h"

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/text/language_detection.h"
#include "common/text/utf8.h"
#include "server/http/libretranslate_fields.h"

namespace fanyi {

DetectRoute::DetectRoute(const ModelRegistry& models) : models_(models) {}

void DetectRoute::Detect(const RequestFields& fields,
                         HttpResponder respond) const {
  bool is_array = false;
  const std::vector<std::string> texts = ReadTexts(fields, &is_array);
  // fanyi's extension: a ranking per text of an array.
  const bool per_text = BooleanField(fields, "per_text", false);
  // The language a text is in, whatever the models serve.
  const std::vector<std::string> candidates = models_.DetectionCandidates();
  // Per language, over the texts it was found in: its confidences and the
  // characters of those texts.
  struct Found {
    std::string language;
    double confidence_sum = 0;
    int texts = 0;
    std::size_t characters = 0;
  };
  std::vector<Found> found;                       // In the order first found.
  nlohmann::json each = nlohmann::json::array();  // Per text.
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::vector<DetectedLanguage> ranked;
    try {
      ranked = DetectLanguages(texts[i], candidates);
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, (is_array ? "q[" + std::to_string(i) + "]: "
                                     : std::string("q: ")) +
                               e.what());
    }
    const std::size_t characters = DecodeUtf8(texts[i]).size();
    nlohmann::json& own = each.emplace_back(nlohmann::json::array());
    for (const DetectedLanguage& language : ranked) {
      own.push_back({{"confidence", language.confidence},
                     {"language", language.language}});
      auto same = std::find_if(found.begin(), found.end(), [&](const Found& f) {
        return f.language == language.language;
      });
      if (same == found.end()) {
        same = found.insert(found.end(), Found{language.language});
      }
      same->confidence_sum += language.confidence;
      ++same->texts;
      same->characters += characters;
    }
  }
  if (!is_array || per_text) {
    respond(JsonResponse(200, is_array ? each : each.front()));
    return;
  }
  // As LibreTranslate answers a list: one ranking for all the texts, each
  // language's confidence averaged over the texts it was found in, ranked
  // by that average weighted by their length (stable: first found first
  // among equals); English at 0 when nothing was found.
  std::stable_sort(found.begin(), found.end(),
                   [](const Found& a, const Found& b) {
                     return a.confidence_sum / a.texts * a.characters >
                            b.confidence_sum / b.texts * b.characters;
                   });
  nlohmann::json ranking = nlohmann::json::array();
  for (const Found& language : found) {
    ranking.push_back({{"confidence", language.confidence_sum / language.texts},
                       {"language", language.language}});
  }
  if (ranking.empty())
    ranking.push_back({{"confidence", 0.0}, {"language", "en"}});
  respond(JsonResponse(200, ranking));
}

}  // namespace fanyi
