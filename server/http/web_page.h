#ifndef FANYI_SERVER_HTTP_WEB_PAGE_H_
#define FANYI_SERVER_HTTP_WEB_PAGE_H_

#include <string_view>

namespace fanyi {

// The page served at / (server/http/page/index.html, built into the
// binary): a translator on the HTTP API, for a person to try.
std::string_view WebPage();

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_WEB_PAGE_H_
