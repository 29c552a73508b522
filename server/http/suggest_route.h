#ifndef FANYI_SERVER_HTTP_SUGGEST_ROUTE_H_
#define FANYI_SERVER_HTTP_SUGGEST_ROUTE_H_

#include <cstdint>
#include <string>

#include "common/formats/suggestion_store.h"
#include "server/http/http_server.h"
#include "server/http/request_fields.h"
#include "server/model_registry.h"

namespace fanyi {

// LibreTranslate's POST /suggest: users' suggested translations added to a
// SQLite file (SuggestionStore), each with the served model it corrects.
// Thread-safe.
class SuggestRoute {
 public:
  // Opens (or creates) the suggestions file `path`, which may hold
  // `max_suggestions` suggestions and `max_bytes` bytes; throws
  // std::runtime_error as SuggestionStore does. `models` must outlive this.
  SuggestRoute(const ModelRegistry& models, const std::string& path,
               int64_t max_suggestions, int64_t max_bytes);

  // POST /suggest: stores q's suggested translation s (from source to
  // target; each UTF-8, not blank, within the text limit and
  // kMaxSuggestionBytes) with the model that would translate it and the
  // client's key; {"success": true}. 507 when the file is full, 503 while
  // another program holds its lock.
  HttpResponse Suggest(const RequestFields& fields,
                       const std::string& api_key) const;

 private:
  const ModelRegistry& models_;
  // Mutable: adding to the file is not a change of the route's state.
  mutable SuggestionStore suggestions_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_SUGGEST_ROUTE_H_
