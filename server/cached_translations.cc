#include "server/cached_translations.h"

#include <cstddef>
#include <optional>
#include <utility>

namespace fanyi {

int TakeFromCache(TranslationCache* cache, const ModelRoute& route,
                  TextRequest* request, std::vector<v1::Translation*>* outputs,
                  std::vector<std::string>* cache_keys) {
  if (cache == nullptr) return 0;
  const std::string key_start = RouteCacheKey("grpc", route, *request);
  int beam_size = 0;
  TextRequest missed = *request;
  missed.texts.clear();
  missed.indices.clear();
  std::vector<v1::Translation*> missed_outputs;
  for (std::size_t i = 0; i < request->texts.size(); ++i) {
    std::string key = key_start;
    AppendKeyPart(request->texts[i], &key);
    v1::TranslateResponse kept;
    if (std::optional<std::string> value = cache->Get(key);
        value && kept.ParseFromString(*value)) {
      (*outputs)[i]->MergeFrom(kept.translation());
      beam_size = kept.beam_size();
      continue;
    }
    missed.texts.push_back(request->texts[i]);
    missed.indices.push_back(request->indices.empty() ? i
                                                      : request->indices[i]);
    missed_outputs.push_back((*outputs)[i]);
    cache_keys->push_back(std::move(key));
  }
  *request = std::move(missed);
  *outputs = std::move(missed_outputs);
  return beam_size;
}

void KeepInCache(TranslationCache& cache, const std::string& key,
                 const v1::Translation& translation, int beam_size) {
  // What the cache keeps: the text's translation, and the beam it was made
  // with (the call's answer names it).
  v1::TranslateResponse kept;
  *kept.mutable_translation() = translation;
  kept.mutable_translation()->clear_detected_language();
  kept.set_beam_size(beam_size);
  cache.Put(key, kept.SerializeAsString());
}

}  // namespace fanyi
