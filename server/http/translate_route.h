#ifndef FANYI_SERVER_HTTP_TRANSLATE_ROUTE_H_
#define FANYI_SERVER_HTTP_TRANSLATE_ROUTE_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/pipeline/request_limits.h"
#include "common/text/script_converter.h"
#include "server/assembly_pool.h"
#include "server/http/http_server.h"
#include "server/http/language_codes.h"
#include "server/http/request_fields.h"
#include "server/model_registry.h"
#include "server/translation_cache.h"

namespace fanyi {

// Settings of TranslateRoute.
struct TranslateRouteOptions {
  // How long a request may take before it fails with 504.
  std::chrono::milliseconds translate_timeout{60000};
  // Translations kept to answer the same text asked the same way again;
  // null: none. Not owned: it must outlive the route.
  TranslationCache* cache = nullptr;
};

// LibreTranslate's POST /translate on fanyi's engine: each text's source
// language named or detected, texts already in the target kept (or, for
// Chinese, written in the target's script), the rest grouped by source
// language, each group one job of its route's models (through the pivot
// language when no one model serves the pair), the cache asked first. The
// last job to finish answers. Thread-safe.
class TranslateRoute {
 public:
  // `models` and `assembly` must outlive this.
  TranslateRoute(ModelRegistry& models, AssemblyPool& assembly,
                 const TranslateRouteOptions& options);

  // POST /translate: q (a string or an array of strings), source (or
  // "auto": each text detected on its own, among the languages served into
  // the target), target, format (text or html), alternatives, and fanyi's
  // beam_size, glossary, do_not_translate, translate_template_tokens and
  // model. A pair no model serves goes through the pivot language, and the
  // answer's "pivot" says so. Its decoding is cancelled once `client_gone`
  // (may be null) is set. Throws HttpError for what it refuses before
  // decoding; answers through `respond` otherwise.
  void Translate(const RequestFields& fields,
                 std::shared_ptr<const std::atomic<bool>> client_gone,
                 HttpResponder respond) const;

 private:
  struct Answer;    // One request's answer while it decodes.
  struct Request;   // What the request asks, read and checked.
  struct GroupJob;  // The job of the texts of one source language.

  // Reads and checks the fields; the texts' source languages, named or
  // detected (each detection recorded in `answer`).
  Request Read(const RequestFields& fields, Answer* answer) const;
  // Writes the Chinese texts already in the target language in the
  // target's script (OpenCC, no model) into `answer`.
  void ConvertScripts(const Request& request, Answer* answer) const;
  // The job of each group of texts of one source language that the cache
  // cannot answer (cached texts filled into `answer`), prepared for its
  // route; HttpError 400 when a text is refused.
  std::vector<GroupJob> PrepareJobs(
      const RequestFields& fields, const Request& request,
      const std::shared_ptr<const std::atomic<bool>>& client_gone,
      Answer* answer) const;

  ModelRegistry& models_;
  AssemblyPool& assembly_;
  const TranslateRouteOptions options_;
  // For texts already in the target language but not in its script.
  const ScriptConverters converters_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_TRANSLATE_ROUTE_H_
