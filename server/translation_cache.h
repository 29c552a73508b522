// Translations already made, kept to answer the same text asked again the
// same way (a popular post that every Mastodon instance translates), least
// recently used first out, within a bound of bytes. Keys and values are
// the caller's: the key names the models (and their versions) and every
// option that changes the answer, so that a new model version never
// serves an old answer.
#ifndef FANYI_SERVER_TRANSLATION_CACHE_H_
#define FANYI_SERVER_TRANSLATION_CACHE_H_

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/pipeline/text_translation.h"
#include "server/model_registry.h"

namespace fanyi {

// A bounded LRU map of strings, with its Prometheus metrics:
// fanyi_cache_hits_total, fanyi_cache_misses_total,
// fanyi_cache_evictions_total and fanyi_cache_bytes. Thread-safe.
class TranslationCache {
 public:
  // What an entry costs besides its key's and value's bytes (the list
  // node, the map's, the strings' own).
  static constexpr std::size_t kEntryOverhead = 160;

  // Holds at most `max_bytes` (keys, values and kEntryOverhead each);
  // registers the metrics on `registry`, which must outlive this.
  TranslationCache(std::size_t max_bytes, prometheus::Registry& registry);

  TranslationCache(const TranslationCache&) = delete;
  TranslationCache& operator=(const TranslationCache&) = delete;

  // The value kept for `key`, now the most recently used; nullopt when
  // none (counted as a hit or a miss).
  std::optional<std::string> Get(const std::string& key);

  // Keeps `value` for `key` (replacing any), evicting the least recently
  // used entries to stay within the bound; an entry larger than the whole
  // bound is not kept.
  void Put(const std::string& key, std::string value);

  std::size_t bytes() const;

 private:
  struct Entry {
    std::string key;
    std::string value;
  };
  static std::size_t Cost(const Entry& entry) {
    return entry.key.size() + entry.value.size() + kEntryOverhead;
  }

  // Drops the least recently used entry. Needs mutex_.
  void EvictOne();

  const std::size_t max_bytes_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // Guarded by mutex_: most recent first.
  // Guarded by mutex_: each entry by its key (a view of Entry::key).
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;
  std::size_t bytes_ = 0;  // Guarded by mutex_.
  prometheus::Counter& hits_;
  prometheus::Counter& misses_;
  prometheus::Counter& evictions_;
  prometheus::Gauge& bytes_gauge_;
};

// Appends `part` to a cache key, its length first, so that no two lists
// of parts make the same key.
void AppendKeyPart(std::string_view part, std::string* key);

// The start of the key of each text of `request` through `route`, for
// answers kept in the form of `surface` ("http", "grpc": each keeps its
// own): the SHA-256 of every model's name and version and every option of
// `request` that changes a translation (format, beam, alternatives, script,
// glossary, terms kept, template tokens), so that a key is its text's
// length plus 64 bytes however long the options; the text is appended to
// it (AppendKeyPart).
std::string RouteCacheKey(const std::string& surface, const ModelRoute& route,
                          const TextRequest& request);

}  // namespace fanyi

#endif  // FANYI_SERVER_TRANSLATION_CACHE_H_
