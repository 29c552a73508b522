#include "server/translation_cache.h"

#include <openssl/sha.h>

#include <utility>

namespace fanyi {

void AppendKeyPart(std::string_view part, std::string* key) {
  key->append(std::to_string(part.size()));
  key->push_back(':');
  key->append(part);
}

std::string RouteCacheKey(const std::string& surface, const ModelRoute& route,
                          const TextRequest& request) {
  std::string key;
  AppendKeyPart(surface, &key);
  AppendKeyPart(std::to_string(route.size()), &key);
  for (const std::shared_ptr<ServedModel>& model : route) {
    AppendKeyPart(model->name(), &key);
    AppendKeyPart(std::to_string(model->version()), &key);
  }
  AppendKeyPart(std::to_string(static_cast<int>(request.format)), &key);
  AppendKeyPart(std::to_string(request.beam_size), &key);
  AppendKeyPart(std::to_string(request.alternatives), &key);
  AppendKeyPart(
      request.script ? std::to_string(static_cast<int>(*request.script)) : "-",
      &key);
  AppendKeyPart(request.template_tokens ? "1" : "0", &key);
  AppendKeyPart(std::to_string(request.glossary.size()), &key);
  for (const GlossaryEntry& entry : request.glossary) {
    AppendKeyPart(entry.source, &key);
    AppendKeyPart(entry.target, &key);
  }
  AppendKeyPart(std::to_string(request.do_not_translate.size()), &key);
  for (const std::string& term : request.do_not_translate) {
    AppendKeyPart(term, &key);
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(),
         digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hashed;
  for (const unsigned char byte : digest) {
    hashed += kHex[byte >> 4];
    hashed += kHex[byte & 15];
  }
  return hashed;
}

TranslationCache::TranslationCache(std::size_t max_bytes,
                                   prometheus::Registry& registry)
    : max_bytes_(max_bytes),
      hits_(prometheus::BuildCounter()
                .Name("fanyi_cache_hits_total")
                .Help("Texts answered from the translation cache.")
                .Register(registry)
                .Add({})),
      misses_(prometheus::BuildCounter()
                  .Name("fanyi_cache_misses_total")
                  .Help("Texts the translation cache did not hold, "
                        "translated.")
                  .Register(registry)
                  .Add({})),
      evictions_(prometheus::BuildCounter()
                     .Name("fanyi_cache_evictions_total")
                     .Help("Translations dropped from the cache to stay "
                           "within --cache_bytes, least recently used "
                           "first.")
                     .Register(registry)
                     .Add({})),
      bytes_gauge_(prometheus::BuildGauge()
                       .Name("fanyi_cache_bytes")
                       .Help("What the translation cache holds, in bytes "
                             "(keys, answers and bookkeeping).")
                       .Register(registry)
                       .Add({})) {}

std::optional<std::string> TranslationCache::Get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = index_.find(key);
  if (found == index_.end()) {
    misses_.Increment();
    return std::nullopt;
  }
  entries_.splice(entries_.begin(), entries_, found->second);
  hits_.Increment();
  return found->second->value;
}

void TranslationCache::EvictOne() {
  const Entry& last = entries_.back();
  bytes_ -= Cost(last);
  index_.erase(last.key);
  entries_.pop_back();
  evictions_.Increment();
}

void TranslationCache::Put(const std::string& key, std::string value) {
  Entry entry{key, std::move(value)};
  const std::size_t cost = Cost(entry);
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto found = index_.find(key); found != index_.end()) {
    bytes_ -= Cost(*found->second);
    const auto old = found->second;
    index_.erase(found);
    entries_.erase(old);
  }
  if (cost <= max_bytes_) {
    while (bytes_ + cost > max_bytes_) EvictOne();
    entries_.push_front(std::move(entry));
    index_.emplace(entries_.front().key, entries_.begin());
    bytes_ += cost;
  }
  bytes_gauge_.Set(static_cast<double>(bytes_));
}

std::size_t TranslationCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

}  // namespace fanyi
