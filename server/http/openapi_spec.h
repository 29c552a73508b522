#ifndef FANYI_SERVER_HTTP_OPENAPI_SPEC_H_
#define FANYI_SERVER_HTTP_OPENAPI_SPEC_H_

#include <string_view>

namespace fanyi {

// The OpenAPI 3.0 document of the HTTP API, as GET /spec serves it: every
// route LibreTranslateApi serves, with its fields, answers and errors.
// Written by hand; http_api_test checks that its paths and methods are the
// served routes.
std::string_view OpenApiSpec();

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_OPENAPI_SPEC_H_
