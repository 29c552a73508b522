// The gRPC service's use of the translation cache: the translations it
// holds taken for a request's texts, and new ones kept.
#ifndef FANYI_SERVER_CACHED_TRANSLATIONS_H_
#define FANYI_SERVER_CACHED_TRANSLATIONS_H_

#include <string>
#include <vector>

#include "common/pipeline/text_translation.h"
#include "fanyi/v1/translator.pb.h"
#include "server/model_registry.h"
#include "server/translation_cache.h"

namespace fanyi {

// Writes the translations `cache` holds for texts of `request` through
// `route` into their `outputs`, and leaves in `request` (its texts and
// indices) and `outputs` only the others, whose keys go to `cache_keys`
// (none without a cache: `cache` null). Returns the beam size a cached
// translation was made with; 0 when none was cached.
int TakeFromCache(TranslationCache* cache, const ModelRoute& route,
                  TextRequest* request, std::vector<v1::Translation*>* outputs,
                  std::vector<std::string>* cache_keys);

// Keeps `translation`, made with `beam_size`, in `cache` under `key`.
void KeepInCache(TranslationCache& cache, const std::string& key,
                 const v1::Translation& translation, int beam_size);

}  // namespace fanyi

#endif  // FANYI_SERVER_CACHED_TRANSLATIONS_H_
