#ifndef FANYI_SERVER_HTTP_DETECT_ROUTE_H_
#define FANYI_SERVER_HTTP_DETECT_ROUTE_H_

#include "server/http/http_server.h"
#include "server/http/request_fields.h"
#include "server/model_registry.h"

namespace fanyi {

// LibreTranslate's POST /detect on fanyi's engine: the languages of the
// texts (ModelRegistry::DetectionCandidates), one ranking for all of them
// as LibreTranslate answers, or fanyi's one per text. Thread-safe.
class DetectRoute {
 public:
  // `models` must outlive this.
  explicit DetectRoute(const ModelRegistry& models);

  // POST /detect: q's languages among the served source languages, most
  // likely first. Throws HttpError for a text it cannot read.
  void Detect(const RequestFields& fields, HttpResponder respond) const;

 private:
  const ModelRegistry& models_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_DETECT_ROUTE_H_
